import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SourceContext, SourceDocument } from '../../../core/contracts.ts';
import { DEFAULT_NETWORK_POLICY } from '../../../core/net/address-policy.ts';
import { runSource } from '../../../core/testing/index.ts';
import { gitFixture, gitWrapper, rejectsWith, type GitFixture } from './helpers.ts';

const TOKEN = 'ghp_SeCrEtToKeN0123456789abcdef';

let fx: GitFixture;

before(async () => {
  fx = await gitFixture({ 'private.git': TOKEN });
  fx.repo('demo')
    .commit({
      'README.md': '# Demo\n\nDemo is a library for demos.\n',
      'docs/guide.md': '# Guide\n\nInstall demo with `npm i demo`.\n',
      'docs/api.md': '# API\n\n## createDemo()\n\nCreates a demo.\n',
      'src/index.ts': 'export const demo = 1;\n',
      'tests/README.md': '# test notes\n',
    }, 'v1 docs')
    .tag('v1.0.0')
    .commit({ 'docs/guide.md': '# Guide\n\nInstall demo with `pnpm add demo` (version 2).\n', 'docs/migrate.md': '# Migrating to 2\n\nRename createDemo.\n' }, 'v2 docs')
    .tag('v2.0.0')
    .checkout('next', true)
    .commit({ 'docs/next.md': '# Next\n\nUpcoming features.\n' }, 'next branch')
    .checkout('main')
    .publish();
  fx.repo('private').commit({ 'README.md': '# Private\n\nInternal docs for the private library.\n' }).publish();
  fx.repo('code-only').commit({ 'src/main.py': 'print(1)\n', 'tests/README.md': '# tests\n', 'node_modules/x/README.md': '# x\n' }).publish();
});

after(() => fx?.close());

const paths = (docs: SourceDocument[]) => docs.map((d) => d.path);

describe('git source over smart HTTP', () => {
  test('reads the default branch: docs and README, not tests or code, with blob ids as hashes', async () => {
    const { documents, logs } = await runSource(fx.source(), { url: fx.url('demo') });
    assert.deepEqual(paths(documents), ['README.md', 'docs/api.md', 'docs/guide.md', 'docs/migrate.md']);
    for (const d of documents) {
      assert.equal(d.format, 'markdown');
      assert.match(d.hash ?? '', /^git\d+:[0-9a-f]{40}$/);
      assert.match(d.meta?.commit ?? '', /^[0-9a-f]{40}$/);
    }
    assert.match(documents.find((d) => d.path === 'docs/guide.md')!.content, /pnpm add demo/);
    assert.ok(logs.some((l) => /documentation files selected/.test(l.message)), 'logs how many files were selected');
    assert.ok(logs.some((l) => /cloning .*demo\.git \(default branch main/.test(l.message)));
  });

  test('spec.branch picks another branch; an unknown branch is a clear error listing the branches', async () => {
    const { documents } = await runSource(fx.source(), { url: fx.url('demo'), branch: 'next' });
    assert.ok(paths(documents).includes('docs/next.md'));
    await rejectsWith(runSource(fx.source(), { url: fx.url('demo'), branch: 'nope' }), 'invalid_source', ['"nope"', 'main', 'next']);
  });

  test('a version is a tag (with or without the leading v); an unknown one lists the tags newest first', async () => {
    const v1 = await runSource(fx.source(), { url: fx.url('demo') }, { version: 'v1.0.0' });
    assert.deepEqual(paths(v1.documents), ['README.md', 'docs/api.md', 'docs/guide.md']);
    assert.match(v1.documents.find((d) => d.path === 'docs/guide.md')!.content, /npm i demo/);
    const bare = await runSource(fx.source(), { url: fx.url('demo') }, { version: '1.0.0' });
    assert.deepEqual(paths(bare.documents), paths(v1.documents));
    await rejectsWith(runSource(fx.source(), { url: fx.url('demo') }, { version: 'v9.9.9' }), 'version_not_found', ['v9.9.9', 'v2.0.0, v1.0.0']);
  });

  test('versions() lists the tags newest first and the default branch', async () => {
    const v = await fx.source().versions({ url: fx.url('demo') });
    assert.deepEqual(v.tags, ['v2.0.0', 'v1.0.0']);
    assert.equal(v.defaultBranch, 'main');
    assert.deepEqual(v.configured, []);
  });

  test('a repository without documentation answers no_documentation', async () => {
    await rejectsWith(runSource(fx.source(), { url: fx.url('code-only') }), 'no_documentation', ['No documentation found', 'code-only.git']);
  });

  test('size limits: more files than maxFiles, or more bytes than maxBytes, is too_large', async () => {
    await rejectsWith(runSource(fx.source({ maxFiles: 2 }), { url: fx.url('demo') }), 'too_large', ['4 documentation files', 'maxFiles']);
    await rejectsWith(runSource(fx.source({ maxBytes: 50 }), { url: fx.url('demo') }), 'too_large', ['maxBytes']);
  });

  test('a missing repository is a clear error', async () => {
    await rejectsWith(runSource(fx.source(), { url: fx.url('missing') }), 'invalid_source', ['missing.git']);
  });
});

describe('private repositories and secrets', () => {
  test('the token opens a private repository; it is sent only as an Authorization header', async () => {
    const before = fx.server.requests.length;
    const { documents, logs } = await runSource(fx.source(), { url: fx.url('private'), token: TOKEN });
    assert.deepEqual(paths(documents), ['README.md']);
    const reqs = fx.server.requests.slice(before);
    assert.ok(reqs.length > 0 && reqs.every((r) => r.auth && r.status === 200));
    assert.ok(reqs.every((r) => !r.path.includes(TOKEN)));
    assert.ok(!JSON.stringify(logs).includes(TOKEN));
    assert.ok(!JSON.stringify(documents).includes(TOKEN));
  });

  test('without a token, or with a wrong one: unauthorized, and the message never holds the token', async () => {
    await rejectsWith(runSource(fx.source(), { url: fx.url('private') }), 'unauthorized', ['needs credentials', 'token']);
    const wrong = 'ghp_WrongToken_9876543210zyx';
    const err = await rejectsWith(runSource(fx.source(), { url: fx.url('private'), token: wrong }), 'unauthorized', ['refused the token']);
    assert.ok(!err.message.includes(wrong));
    assert.ok(!err.message.includes(Buffer.from(`x-access-token:${wrong}`).toString('base64')));
    assert.ok(!err.message.includes(Buffer.from(`git:${wrong}`).toString('base64')));
  });

  test('the token never appears in the argv of a git process', async (t) => {
    const { record, restore } = gitWrapper();
    t.after(restore);
    await runSource(fx.source(), { url: fx.url('private'), token: TOKEN });
    const argv = readFileSync(record, 'utf8');
    assert.match(argv, /clone/, 'the wrapper saw the clone');
    assert.ok(!argv.includes(TOKEN));
    assert.ok(!argv.includes(Buffer.from(`git:${TOKEN}`).toString('base64')));
  });

  test('credentials inside the URL are refused without echoing them', async () => {
    const err = await rejectsWith(runSource(fx.source(), { url: fx.url('private').replace('http://', `http://user:${TOKEN}@`) }), 'invalid_request', ['token']);
    assert.ok(!err.message.includes(TOKEN));
  });
});

describe('network policy, transports and failures', () => {
  test('the operator policy refuses loopback hosts before git contacts them', async () => {
    const before = fx.server.requests.length;
    await rejectsWith(runSource(fx.source({}, DEFAULT_NETWORK_POLICY), { url: fx.url('demo') }), 'forbidden', ['127.0.0.1', 'network.allowHosts']);
    await rejectsWith(runSource(fx.source({}, DEFAULT_NETWORK_POLICY), { url: 'ssh://git@127.0.0.1/owner/repo.git' }), 'forbidden', ['127.0.0.1']);
    await rejectsWith(runSource(fx.source({}, DEFAULT_NETWORK_POLICY), { url: 'git@localhost:owner/repo.git' }), 'forbidden', ['localhost']);
    assert.equal(fx.server.requests.length, before, 'no request reached the server');
  });

  test('file:// URLs are refused unless the operator allows them', async () => {
    const bare = join(fx.root, 'served', 'demo.git');
    await rejectsWith(runSource(fx.source(), { url: `file://${bare}` }), 'forbidden', ['allowFileUrls']);
    const { documents } = await runSource(fx.source({ allowFileUrls: true }), { url: `file://${bare}` });
    assert.deepEqual(paths(documents), ['README.md', 'docs/api.md', 'docs/guide.md', 'docs/migrate.md']);
  });

  test('transient server errors are retried with backoff, then succeed', async () => {
    fx.server.failNext(2, 503);
    const { documents, logs } = await runSource(fx.source({ attempts: 3 }), { url: fx.url('demo') });
    assert.equal(documents.length, 4);
    const retries = logs.filter((l) => l.level === 'warn' && /Retrying in \d+ ms \(attempt [23] of 3\)/.test(l.message));
    assert.equal(retries.length, 2);
  });

  test('a server that keeps failing ends in a clear error after the last attempt', async () => {
    fx.server.failNext(1000, 502);
    try {
      await rejectsWith(runSource(fx.source({ attempts: 3 }), { url: fx.url('demo') }), 'invalid_source', ['Could not reach the git server', 'demo.git', 'gave up after 3 attempts']);
    } finally {
      fx.server.failNext(0);
    }
  });

  test('symbolic links in the repository are never followed', async () => {
    fx.repo('links').commit({ 'docs/index.md': '# Index\n\nReal page.\n' }).symlink('docs/passwd.md', '/etc/passwd').publish();
    const { documents } = await runSource(fx.source(), { url: fx.url('links') });
    assert.deepEqual(paths(documents), ['docs/index.md']);
  });

  test('an aborted read stops with the abort reason and removes its clone', async (t) => {
    const tmp = mkdtempSync(join(tmpdir(), 'refdesk-git-tmp-'));
    const old = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    t.after(() => {
      process.env.TMPDIR = old;
      if (old === undefined) delete process.env.TMPDIR;
      rmSync(tmp, { recursive: true, force: true });
    });
    const controller = new AbortController();
    const ctx: SourceContext = {
      libraryId: '/demo/demo',
      version: '',
      spec: { url: fx.url('demo') },
      signal: controller.signal,
      previous: new Map(),
      log: (_level, message) => {
        if (message.startsWith('cloning')) controller.abort(new Error('job cancelled'));
      },
      progress: () => {},
    };
    const got: SourceDocument[] = [];
    await assert.rejects(
      (async () => {
        for await (const d of fx.source().read(ctx)) got.push(d);
      })(),
      /job cancelled/,
    );
    assert.equal(got.length, 0);
    assert.deepEqual(readdirSync(tmp), [], 'the temporary clone was removed');
  });
});

describe('refresh', () => {
  test('an unchanged commit is not cloned again; a changed file is read, the others are marked unchanged', async () => {
    const repo = fx.repo('refresh').commit({ 'README.md': '# R\n\nFirst.\n', 'docs/a.md': '# A\n\nAlpha.\n', 'docs/b.md': '# B\n\nBeta.\n' });
    repo.publish();
    const first = await runSource(fx.source(), { url: fx.url('refresh') });
    const previous = new Map(first.documents.map((d) => [d.path, { hash: d.hash!, meta: d.meta! }]));

    const before = fx.server.requests.length;
    const same = await runSource(fx.source(), { url: fx.url('refresh') }, { previous });
    assert.ok(same.documents.every((d) => d.unchanged === true && d.content === ''));
    assert.deepEqual(paths(same.documents), paths(first.documents));
    const reqs = fx.server.requests.slice(before);
    assert.equal(reqs.filter((r) => r.method === 'POST').length, 1, 'only the ref listing, no clone');

    repo.commit({ 'docs/b.md': '# B\n\nBeta, revised.\n', 'docs/c.md': '# C\n\nGamma.\n', 'README.md': null }).publish();
    const next = await runSource(fx.source(), { url: fx.url('refresh') }, { previous });
    assert.deepEqual(paths(next.documents), ['docs/a.md', 'docs/b.md', 'docs/c.md']);
    const byPath = new Map(next.documents.map((d) => [d.path, d]));
    assert.equal(byPath.get('docs/a.md')!.unchanged, true);
    assert.equal(byPath.get('docs/a.md')!.hash, previous.get('docs/a.md')!.hash);
    assert.match(byPath.get('docs/b.md')!.content, /revised/);
    assert.notEqual(byPath.get('docs/b.md')!.hash, previous.get('docs/b.md')!.hash);
    assert.ok(!byPath.get('docs/c.md')!.unchanged);
    assert.ok(next.logs.some((l) => /1 documents unchanged since the last build, 2 to read/.test(l.message)));
  });
});
