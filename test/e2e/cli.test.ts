/**
 * End-to-end tests of the `refdesk` command: the real bin/refdesk.js run as child processes on
 * temporary data directories (ingest, queries, bad input, a server's persistence across a
 * restart, `add` through a running server, the one-writer lock, a kill in the middle of an
 * ingest).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CORPORA_DIR, corpora, hasCorpora } from '../helpers/corpora.ts';
import {
  httpGet,
  makeDataDir,
  removeDataDir,
  runRefdesk,
  sleep,
  snippetSources,
  spawnRefdesk,
  startServer,
  stopAll,
  stopProcess,
  type CliResult,
  type RefdeskServer,
} from './refdesk-process.ts';

const SKIP = { skip: hasCorpora ? false : 'shared corpora not present' } as const;
const KOA = join(CORPORA_DIR, 'koa');
const LOCK = 'refdesk.lock';

/** A readable failure message: the command's exit and output. */
function show(r: CliResult): string {
  return `exit ${r.code} (${r.signal ?? 'no signal'})\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
}

function assertOk(r: CliResult): void {
  assert.equal(r.code, 0, show(r));
}

function assertFails(r: CliResult, message: RegExp): void {
  assert.equal(r.code, 1, show(r));
  assert.match(r.stderr, message, show(r));
  // A user error is a one-line message, not a crash.
  assert.doesNotMatch(r.stderr, /\n\s+at .+:\d+:\d+\)?\n/, `stack trace printed:\n${show(r)}`);
}

/** The `libraries` line of one library: state and snippet count. */
function libraryLine(stdout: string, id: string): { state: string; snippets: number; line: string } | null {
  const line = stdout.split('\n').find((l) => l.split('\t')[0] === id);
  if (!line) return null;
  const [, state, snippets] = line.split('\t');
  return { state, snippets: Number(/^(\d+) snippets$/.exec(snippets)?.[1] ?? NaN), line };
}

/** The lines of `refdesk jobs`: id, library, state. */
function jobLines(stdout: string): Array<{ id: string; libraryId: string; state: string; line: string }> {
  return stdout
    .split('\n')
    .filter((l) => l.includes('\t'))
    .map((line) => {
      const [id, libraryId, state] = line.split('\t');
      return { id, libraryId, state, line };
    });
}

function parseJson(r: CliResult): any {
  assertOk(r);
  try {
    return JSON.parse(r.stdout);
  } catch (e) {
    assert.fail(`stdout is not JSON (${(e as Error).message}):\n${show(r)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// 1. add, libraries, context, search and bad input
// ---------------------------------------------------------------------------------------------

describe('refdesk CLI: add koa, then query it', { ...SKIP, timeout: 180_000 }, () => {
  let dir: string;
  let added: CliResult;

  before(async () => {
    dir = makeDataDir();
    added = await runRefdesk(['add', KOA, '--name', 'koa'], dir, 120_000);
  });
  after(async () => {
    await stopAll();
    removeDataDir(dir);
  });

  test('add exits 0 and prints the library, its files and snippets', () => {
    assertOk(added);
    assert.match(added.stdout, /^\/docs\/koa: 11 files, [1-9]\d* snippets/m, show(added));
    assert.match(added.stderr, /Indexing .*koa as \/docs\/koa/, show(added));
    // The writer released the data directory when it finished.
    assert.equal(existsSync(join(dir, LOCK)), false, 'refdesk.lock left behind by add');
  });

  test('libraries lists /docs/koa finalized with the snippet count add printed', async () => {
    const n = Number(/^\/docs\/koa: 11 files, (\d+) snippets/m.exec(added.stdout)?.[1]);
    const r = await runRefdesk(['libraries'], dir);
    assertOk(r);
    const koa = libraryLine(r.stdout, '/docs/koa');
    assert.ok(koa, show(r));
    assert.equal(koa.state, 'finalized');
    assert.equal(koa.snippets, n);
  });

  test('context --json: snippets from docs/api/context.md with line ranges', async () => {
    const json = parseJson(await runRefdesk(['context', '/docs/koa', 'ctx.throw', '--json'], dir));
    assert.ok(Array.isArray(json.codeSnippets) && Array.isArray(json.infoSnippets));
    const sources = snippetSources(json);
    assert.ok(sources.length > 0, 'no snippets');
    assert.ok(
      sources.some((s) => s.path === 'docs/api/context.md'),
      `no snippet from docs/api/context.md: ${JSON.stringify(sources)}`,
    );
    for (const s of sources) {
      assert.ok(s.path.startsWith('docs/'), s.path);
      assert.ok(Number.isInteger(s.lineStart) && Number.isInteger(s.lineEnd), JSON.stringify(s));
      assert.ok(s.lineStart >= 1 && s.lineStart <= s.lineEnd, JSON.stringify(s));
    }
    // The best code snippet is about ctx.throw.
    assert.match(JSON.stringify(json.codeSnippets[0]), /ctx\.throw/);
  });

  test('context without --json prints text with its sources', async () => {
    const r = await runRefdesk(['context', '/docs/koa', 'ctx.throw'], dir);
    assertOk(r);
    assert.match(r.stdout, /Source: docs\//);
    assert.match(r.stdout, /Source: docs\/api\/context\.md \(lines (\d+)-(\d+)\)/);
    assert.match(r.stdout, /ctx\.throw/);
    assert.throws(() => JSON.parse(r.stdout));
  });

  test('context --tokens limits the answer', async () => {
    const small = parseJson(await runRefdesk(['context', '/docs/koa', 'ctx.throw', '--json', '--tokens', '300'], dir));
    const big = parseJson(await runRefdesk(['context', '/docs/koa', 'ctx.throw', '--json'], dir));
    assert.ok(snippetSources(small).length >= 1);
    assert.ok(snippetSources(small).length < snippetSources(big).length);
  });

  test('search koa cookies lists /docs/koa', async () => {
    const r = await runRefdesk(['search', 'koa', 'cookies'], dir);
    assertOk(r);
    assert.match(r.stdout, /^\/docs\/koa\t/m, show(r));
  });

  test('read commands do not take the lock', () => {
    assert.equal(existsSync(join(dir, LOCK)), false);
  });

  test('context with a library ID without its leading slash: exit 1, Invalid library ID', async () => {
    assertFails(await runRefdesk(['context', 'docs/koa', 'x'], dir), /Invalid library ID/);
  });

  test('context on a library that does not exist: exit 1, not found', async () => {
    assertFails(await runRefdesk(['context', '/docs/missing', 'x'], dir), /not found/);
  });

  test('context without a question: exit 1 with how to call it', async () => {
    assertFails(await runRefdesk(['context', '/docs/koa'], dir), /give a library ID and a question/);
  });

  test('context --tokens that is not a number: exit 1', async () => {
    assertFails(await runRefdesk(['context', '/docs/koa', 'x', '--tokens', 'lots'], dir), /--tokens must be a positive integer/);
  });

  test('add a path that does not exist: exit 1, says so', async () => {
    assertFails(await runRefdesk(['add', '/nonexistent', '--name', 'x'], dir), /\/nonexistent does not exist/);
  });

  test("add with an invalid name ('../evil'): exit 1, nothing added", async () => {
    assertFails(await runRefdesk(['add', KOA, '--name', '../evil'], dir), /Invalid library name/);
    const r = await runRefdesk(['libraries'], dir);
    assertOk(r);
    assert.deepEqual(
      r.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0]),
      ['/docs/koa'],
    );
    assert.equal(existsSync(join(dir, LOCK)), false);
  });

  test('an unknown command: exit 1 and the usage', async () => {
    const r = await runRefdesk(['frobnicate'], dir);
    assertFails(r, /unknown command "frobnicate"/);
    assert.match(r.stderr, /Usage: refdesk <command>/);
  });

  test('no command: exit 1 and the usage; --help: exit 0', async () => {
    const none = await runRefdesk([], dir);
    assert.equal(none.code, 1, show(none));
    assert.match(none.stdout, /Usage: refdesk <command>/);
    const help = await runRefdesk(['--help'], dir);
    assertOk(help);
    assert.match(help.stdout, /Usage: refdesk <command>/);
  });

  test('an unknown option: exit 1 with a one-line message', async () => {
    assertFails(await runRefdesk(['libraries', '--bogus'], dir), /Unknown option '--bogus'/);
  });

  test(
    'an option without its value: exit 1 with a one-line message',
    async () => {
      assertFails(await runRefdesk(['add', KOA, '--name'], dir), /Option '--name <value>' argument missing/);
    },
  );
});

// ---------------------------------------------------------------------------------------------
// 2. every corpus ingests through the CLI
// ---------------------------------------------------------------------------------------------

describe('refdesk CLI: every corpus in MANIFEST.json', { ...SKIP, timeout: 600_000 }, () => {
  let dir: string;
  before(() => {
    dir = makeDataDir();
  });
  after(async () => {
    await stopAll();
    removeDataDir(dir);
  });

  test('add each corpus, then context finds snippets from its docs', async (t) => {
    const all = corpora();
    assert.ok(all.length >= 10, `MANIFEST.json lists ${all.length} corpora`);
    for (const c of all) {
      await t.test(c.name, async () => {
        const added = await runRefdesk(['add', join(CORPORA_DIR, c.name), '--name', c.name], dir, 240_000);
        assertOk(added);
        const m = new RegExp(`^/docs/${c.name}: (\\d+) files, (\\d+) snippets`, 'm').exec(added.stdout);
        assert.ok(m, show(added));
        assert.ok(Number(m[1]) > 0 && Number(m[2]) > 0, show(added));

        const json = parseJson(await runRefdesk(['context', `/docs/${c.name}`, c.name, '--json'], dir));
        const sources = snippetSources(json);
        assert.ok(sources.length > 0, `no snippet for "${c.name}" in /docs/${c.name}`);
        const ours = sources.filter((s) => s.path.startsWith(c.docsPath) && Number.isInteger(s.lineStart) && s.lineStart >= 1 && s.lineStart <= s.lineEnd);
        assert.ok(ours.length > 0, `no snippet under ${c.docsPath} with a line range: ${JSON.stringify(sources.slice(0, 5))}`);
        for (const s of sources) assert.ok(s.lineStart <= s.lineEnd, JSON.stringify(s));
      });
    }
    const r = await runRefdesk(['libraries'], dir);
    assertOk(r);
    for (const c of all) assert.equal(libraryLine(r.stdout, `/docs/${c.name}`)?.state, 'finalized', `${c.name}:\n${r.stdout}`);
  });
});

// ---------------------------------------------------------------------------------------------
// 3. a server keeps what it serves across a restart
// ---------------------------------------------------------------------------------------------

describe('refdesk serve: persistence across a restart', { ...SKIP, timeout: 180_000 }, () => {
  let dir: string;
  before(() => {
    dir = makeDataDir();
  });
  after(async () => {
    await stopAll();
    removeDataDir(dir);
  });

  test('same answer before and after SIGTERM and a new start; the lock is released', async () => {
    assertOk(await runRefdesk(['add', KOA, '--name', 'koa'], dir, 120_000));
    const path = '/api/v2/context?' + new URLSearchParams({ libraryId: '/docs/koa', query: 'ctx.throw', type: 'json' });

    let server: RefdeskServer | undefined = await startServer(dir);
    let first: { status: number; text: string; body: any };
    try {
      const lock = JSON.parse(readFileSync(join(dir, LOCK), 'utf8'));
      assert.equal(lock.pid, server.pid);
      assert.equal(lock.mode, 'server');
      assert.equal(lock.port, server.port);

      first = await httpGet(server.base + path);
      assert.equal(first.status, 200, first.text);
      assert.ok(snippetSources(first.body).some((s) => s.path === 'docs/api/context.md'), first.text);

      const exit = await server.stop();
      assert.deepEqual(exit, { code: 0, signal: null }, `server did not exit cleanly on SIGTERM:\n${server.stderr()}`);
      assert.equal(existsSync(join(dir, LOCK)), false, 'refdesk.lock left behind by a stopped server');
      server = undefined;

      server = await startServer(dir);
      const second = await httpGet(server.base + path);
      assert.equal(second.status, 200, second.text);
      assert.deepEqual(second.body, first.body);

      // The CLI (reader) gives the server's answer too.
      const cli = parseJson(await runRefdesk(['context', '/docs/koa', 'ctx.throw', '--json'], dir));
      assert.deepEqual(cli, first.body);

      const exit2 = await server.stop();
      assert.deepEqual(exit2, { code: 0, signal: null }, server.stderr());
      server = undefined;
      assert.equal(existsSync(join(dir, LOCK)), false);
    } finally {
      if (server) await server.stop();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 4. `add` while a server runs goes through the server; the server is the only writer
// ---------------------------------------------------------------------------------------------

describe('refdesk add with a running server', { ...SKIP, timeout: 180_000 }, () => {
  let dir: string;
  let server: RefdeskServer | undefined;
  before(async () => {
    dir = makeDataDir();
    server = await startServer(dir);
  });
  after(async () => {
    if (server) await server.stop();
    await stopAll();
    removeDataDir(dir);
  });

  test('add sends the documents to the server, which then answers for them', async () => {
    assert.ok(server);
    const r = await runRefdesk(['add', join(CORPORA_DIR, 'zustand'), '--name', 'zustand'], dir, 120_000);
    assertOk(r);
    assert.match(r.stderr, new RegExp(`A Refdesk server \\(pid ${server.pid}\\) is using .*; sending the documents to it on port ${server.port}\\.`), show(r));
    assert.match(r.stderr, /Queued ingest of \/docs\/zustand \(job [0-9a-f-]+\)/, show(r));
    assert.match(r.stdout, /^\/docs\/zustand: 42 files, [1-9]\d* snippets \(finalized\)/m, show(r));

    const res = await httpGet(server.base + '/api/v2/context?' + new URLSearchParams({ libraryId: '/docs/zustand', query: 'create a store', type: 'json' }));
    assert.equal(res.status, 200, res.text);
    const sources = snippetSources(res.body);
    assert.ok(sources.length > 0, res.text);
    for (const s of sources) {
      assert.ok(s.path.endsWith('.md'), JSON.stringify(s));
      assert.ok(s.lineStart >= 1 && s.lineStart <= s.lineEnd, JSON.stringify(s));
    }

    const search = await httpGet(server.base + '/api/v2/libs/search?' + new URLSearchParams({ libraryName: 'zustand', query: 'state' }));
    assert.equal(search.body.results[0]?.id, '/docs/zustand', search.text);
    assert.equal(search.body.results[0]?.state, 'finalized');
  });

  test(
    'a folder added through the server has the same source paths as a direct add',
    async () => {
      assert.ok(server);
      const question = { libraryId: '/docs/zustand', query: 'create a store', type: 'json' };
      const viaServer = await httpGet(server.base + '/api/v2/context?' + new URLSearchParams(question));
      assert.equal(viaServer.status, 200, viaServer.text);
      const direct = makeDataDir();
      try {
        assertOk(await runRefdesk(['add', join(CORPORA_DIR, 'zustand'), '--name', 'zustand'], direct, 120_000));
        const json = parseJson(await runRefdesk(['context', '/docs/zustand', 'create a store', '--json'], direct));
        const paths = (j: any) => snippetSources(j).map((s) => `${s.path}#L${s.lineStart}-L${s.lineEnd}`);
        assert.ok(paths(json).every((p) => p.startsWith('docs/')), JSON.stringify(paths(json)));
        assert.deepEqual(paths(viaServer.body), paths(json));
      } finally {
        removeDataDir(direct);
      }
    },
  );

  test('the lock names the server while it runs', () => {
    assert.ok(server);
    const lock = JSON.parse(readFileSync(join(dir, LOCK), 'utf8'));
    assert.equal(lock.pid, server.pid);
    assert.equal(lock.mode, 'server');
    assert.equal(lock.port, server.port);
  });

  test('a second server on the same DATA_DIR refuses to open it and leaves the lock alone', async () => {
    assert.ok(server);
    const lockBefore = readFileSync(join(dir, LOCK), 'utf8');
    const second = spawnRefdesk(['serve'], dir);
    let exit;
    try {
      exit = await second.exited(30_000);
    } finally {
      await stopProcess(second.child);
    }
    const r = { ...exit, stdout: second.stdout(), stderr: second.stderr() };
    assertFails(r, new RegExp(`in use by a running refdesk server \\(pid ${server.pid}, port ${server.port}`));
    assert.doesNotMatch(r.stdout, /Refdesk listening/);
    assert.equal(readFileSync(join(dir, LOCK), 'utf8'), lockBefore);
    // The first server still serves.
    const ping = await httpGet(server.base + '/ping');
    assert.deepEqual(ping.body, { status: 'ok', message: 'pong' });
  });

  test('demo refuses a data directory a server uses', async () => {
    assert.ok(server);
    assertFails(await runRefdesk(['demo'], dir, 30_000), new RegExp(`pid ${server.pid}\\) already uses`));
  });

  test('read commands work beside the server', async () => {
    const r = await runRefdesk(['libraries'], dir);
    assertOk(r);
    assert.equal(libraryLine(r.stdout, '/docs/zustand')?.state, 'finalized', r.stdout);
    const jobs = await runRefdesk(['jobs', '/docs/zustand'], dir);
    assertOk(jobs);
    assert.deepEqual(jobLines(jobs.stdout).map((j) => j.state), ['succeeded'], jobs.stdout);
  });

  test('an invalid name is refused by the server; no upload is left behind', async () => {
    const uploads = join(dir, 'uploads');
    const before = existsSync(uploads) ? readdirSync(uploads).length : 0;
    assertFails(await runRefdesk(['add', KOA, '--name', '../evil'], dir), /Invalid library name/);
    assert.equal(existsSync(uploads) ? readdirSync(uploads).length : 0, before);
  });

  test(
    '--title and --description reach the server',
    async () => {
      assert.ok(server);
      assertOk(await runRefdesk(['add', KOA, '--name', 'koa', '--title', 'Koa', '--description', 'Koa web framework docs'], dir, 120_000));
      const search = await httpGet(server.base + '/api/v2/libs/search?' + new URLSearchParams({ libraryName: 'koa', query: 'koa' }));
      const koa = search.body.results.find((l: { id: string }) => l.id === '/docs/koa');
      assert.equal(koa?.title, 'Koa');
      assert.equal(koa?.description, 'Koa web framework docs');
    },
  );
});

// ---------------------------------------------------------------------------------------------
// 5. a kill in the middle of an ingest leaves the served version intact
// ---------------------------------------------------------------------------------------------

describe('refdesk add killed mid-ingest', { ...SKIP, timeout: 900_000 }, () => {
  let dir: string;
  before(() => {
    dir = makeDataDir();
  });
  after(async () => {
    await stopAll();
    removeDataDir(dir);
  });

  test('SIGKILL during a re-index: the served version unchanged, the job queued again and run by the next server', async () => {
    assertOk(await runRefdesk(['add', KOA, '--name', 'koa'], dir, 120_000));
    const beforeJson = await runRefdesk(['context', '/docs/koa', 'ctx.throw', '--json'], dir);
    assertOk(beforeJson);
    const beforeLibs = await runRefdesk(['libraries'], dir);
    const koaBefore = libraryLine(beforeLibs.stdout, '/docs/koa');
    assert.equal(koaBefore?.state, 'finalized', beforeLibs.stdout);

    // Re-index /docs/koa from the 5 MB python corpus, and kill it once it is under way.
    const reindex = spawnRefdesk(['add', join(CORPORA_DIR, 'python'), '--name', 'koa'], dir);
    try {
      await reindex.waitFor('stderr', /^ {2}[1-9]\d* files, \d+ snippets, [\d.]+ s$/m, 60_000);
      await sleep(1500);
      assert.equal(reindex.child.exitCode, null, `the re-index ended before the kill:\n${reindex.stderr()}\n${reindex.stdout()}`);
      reindex.child.kill('SIGKILL');
      const exit = await reindex.exited(10_000);
      assert.equal(exit.signal, 'SIGKILL');
    } finally {
      await stopProcess(reindex.child);
    }
    assert.doesNotMatch(reindex.stdout(), /finalized/, 'the re-index finished before it was killed');
    // The killed writer's lock is still there: stale.
    assert.equal(JSON.parse(readFileSync(join(dir, LOCK), 'utf8')).pid, reindex.pid);

    // Readers still answer from the served version while the lock is stale.
    const during = await runRefdesk(['context', '/docs/koa', 'ctx.throw', '--json'], dir);
    assertOk(during);
    assert.equal(during.stdout, beforeJson.stdout);

    // The next writer takes over the stale lock and recovers the data directory.
    const other = await runRefdesk(['add', KOA, '--name', 'other'], dir, 120_000);
    assertOk(other);
    assert.match(other.stdout, /^\/docs\/other: 11 files/m);
    assert.match(other.stderr, /taking over a stale lock/, show(other));
    assert.equal(existsSync(join(dir, LOCK)), false);

    const jobs = await runRefdesk(['jobs', '/docs/koa'], dir);
    assertOk(jobs);
    const lines = jobLines(jobs.stdout);
    assert.equal(lines.length, 2, jobs.stdout);
    assert.ok(lines.every((j) => j.libraryId === '/docs/koa'), jobs.stdout);
    // The killed job is queued again (a writer's open recovers it; a server runs it).
    assert.deepEqual(lines.map((j) => j.state).sort(), ['queued', 'succeeded'], jobs.stdout);
    const resumed = lines.find((j) => j.state === 'queued')!;

    const after = await runRefdesk(['context', '/docs/koa', 'ctx.throw', '--json'], dir);
    assertOk(after);
    assert.equal(after.stdout, beforeJson.stdout);

    const afterLibs = await runRefdesk(['libraries'], dir);
    assertOk(afterLibs);
    const koaAfter = libraryLine(afterLibs.stdout, '/docs/koa');
    assert.equal(koaAfter?.state, 'finalized', afterLibs.stdout);
    assert.equal(koaAfter?.snippets, koaBefore?.snippets);
    assert.equal(koaAfter?.line, koaBefore?.line);

    // A server started on the directory runs the resumed job to its end: /docs/koa then serves
    // the python corpus it was re-indexing from.
    const server = await startServer(dir, 120_000);
    try {
      let state = '';
      for (const until = Date.now() + 480_000; Date.now() < until && state !== 'succeeded' && state !== 'failed'; ) {
        await sleep(200);
        // A server busy ingesting may drop a kept-alive connection under a poll (as the CLI's
        // followJob allows for): ask again.
        const poll = await httpGet(`${server.base}/api/admin/jobs/${resumed.id}`, 15_000, server.adminAuth).catch(() => null);
        if (poll) state = poll.body.job.state;
      }
      assert.equal(state, 'succeeded');
      const log = (await httpGet(`${server.base}/api/admin/jobs/${resumed.id}`, 15_000, server.adminAuth)).body.log.map((l: { message: string }) => l.message);
      assert.ok(log.some((m: string) => /^resumed after restart/.test(m)), log.join('\n'));
      const libs = (await httpGet(`${server.base}/api/admin/libraries`, 15_000, server.adminAuth)).body.libraries;
      const koa = libs.find((l: { id: string }) => l.id === '/docs/koa');
      assert.notEqual(koa.totalSnippets, koaBefore?.snippets, 'the re-index from the python corpus was finalized');
    } finally {
      await stopProcess(server.child);
    }
  });
});
