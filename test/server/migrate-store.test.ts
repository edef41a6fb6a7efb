/**
 * `refdesk migrate-store` as real processes (issue 24): a data directory with libraries (small
 * corpora of ../shared), an API key, a git token in the settings and a private library's token
 * (both sealed with its secret.key) moves to another data directory and to PostgreSQL (a
 * throwaway cluster of Debian's server) and back to a fresh data directory; GET /api/v2/context
 * answers the same questions byte for byte from each; the API key still works; the planted
 * secrets open with the target's key (ENCRYPTION_KEY for the database) and appear in no output.
 * A non-empty target is refused, and a move that failed half-way is recognised and redone.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { makeDataDir, removeDataDir, runRefdesk, startServer, stopAll, httpGet, type CliResult, type RefdeskServer } from '../e2e/refdesk-process.ts';
import { CORPORA_DIR, hasCorpora } from '../helpers/corpora.ts';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { EmbeddedStore } from '../../plugins/store-embedded/embedded-store.ts';
import { createSecretBox, dataDirSecretBox, parseSecretKey, type SecretBox } from '../../core/secrets.ts';
import { patchSettings } from '../../core/settings.ts';
import { createConsoleLogger, systemClock } from '../../core/services.ts';
import { TRANSFER_MARKER } from '../../core/store-transfer.ts';
import { hasStoredDocs } from '../../core/stored-docs.ts';

const show = (r: CliResult) => `exit ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
const PLANTED_GIT = `ghp_planted${randomBytes(12).toString('hex')}`;
const PLANTED_SPEC = `glpat-planted${randomBytes(12).toString('hex')}`;
const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const QUESTIONS: Array<[string, string]> = [
  ['/docs/koa', 'error handling middleware'],
  ['/docs/koa', 'how to set a cookie'],
  ['/docs/zod', 'parse an object schema with optional fields'],
  ['/docs/zod', 'custom error messages'],
];

function openStore(dataDir: string): EmbeddedStore {
  return new EmbeddedStore({}, { env: { dataDir, mode: 'writer' }, logger: createConsoleLogger('error'), clock: systemClock });
}

/** The answers of the questions, raw bodies, plus a key-authenticated request's status. */
async function answers(server: RefdeskServer, apiKey: string): Promise<{ bodies: string[]; keyStatus: number; libraries: string }> {
  const bodies: string[] = [];
  for (const [id, q] of QUESTIONS) {
    const r = await httpGet(`${server.base}/api/v2/context?libraryId=${encodeURIComponent(id)}&query=${encodeURIComponent(q)}&tokens=2000`);
    assert.equal(r.status, 200, r.text);
    bodies.push(r.text);
  }
  const keyed = await httpGet(`${server.base}/api/v2/context?libraryId=/docs/koa&query=context`, 15_000, { authorization: `Bearer ${apiKey}` });
  const unknown = await httpGet(`${server.base}/api/v2/context?libraryId=/docs/koa&query=context`, 15_000, { authorization: `Bearer ${apiKey.slice(0, -4)}AAAA` });
  assert.equal(unknown.status, 401, 'an unknown key is refused (so the moved key answering 200 means something)');
  const libs = await httpGet(`${server.base}/api/admin/libraries`, 15_000, server.adminAuth);
  assert.equal(libs.status, 200, libs.text);
  const summary = (libs.body.libraries as Array<Record<string, unknown>>)
    .map((l) => JSON.stringify([l.id, l.state, l.totalSnippets, l.totalTokens, l.lastUpdateDate]))
    .sort()
    .join('\n');
  return { bodies, keyStatus: keyed.status, libraries: summary };
}

async function served(dataDir: string, apiKey: string, env: Record<string, string> = {}): Promise<{ bodies: string[]; keyStatus: number; libraries: string; logs: string }> {
  const server = await startServer(dataDir, 120_000, env);
  try {
    return { ...(await answers(server, apiKey)), logs: server.stdout() + server.stderr() };
  } finally {
    await server.stop();
  }
}

/** Whether the served builds of the corpora have their stored documents (what a re-chunk reads) in a data directory. */
async function storedDocsServed(dataDir: string): Promise<boolean[]> {
  const store = openStore(dataDir);
  await store.open();
  try {
    const out: boolean[] = [];
    for (const id of ['/docs/koa', '/docs/zod']) out.push(await hasStoredDocs(dataDir, (await store.getVersion(id, ''))!.activeBuildId!));
    return out;
  } finally {
    await store.close();
  }
}

/** The git token of the `git` setting and the private library's token, opened with `box`. */
function openPlanted(settingGit: unknown, spec: unknown, box: SecretBox): [string, string] {
  return [box.open((settingGit as { githubToken: string }).githubToken), box.open((spec as { token: string }).token)];
}

describe('refdesk migrate-store', { timeout: 1_200_000, skip: hasCorpora ? false : 'needs ../shared/corpora' }, () => {
  const dirs: string[] = [];
  let source: string;
  let apiKey: string;
  let original: Awaited<ReturnType<typeof served>>;
  const dir = (prefix: string) => {
    const d = makeDataDir(prefix);
    dirs.push(d);
    return d;
  };

  before(async () => {
    source = dir('refdesk-migrate-src-');
    writeFileSync(join(source, 'secret.key'), randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
    for (const name of ['koa', 'zod']) {
      const r = await runRefdesk(['add', join(CORPORA_DIR, name), '--name', name], source, 300_000);
      assert.equal(r.code, 0, show(r));
    }
    const key = await runRefdesk(['keys', 'create', '--name', 'ci'], source, 60_000);
    assert.equal(key.code, 0, show(key));
    apiKey = /rdk_[A-Za-z0-9_-]+/.exec(key.stdout)![0];
    // Secrets as the server seals them: a git token in the settings, a private library's token.
    const store = openStore(source);
    await store.open();
    const box = dataDirSecretBox(source, null);
    await patchSettings(store, box, { git: { githubToken: PLANTED_GIT } });
    await store.upsertLibrary({ id: '/acme/private', title: 'Private', source: { kind: 'git', spec: { url: 'https://gitlab.com/acme/private', token: box.seal(PLANTED_SPEC) } } });
    await store.close();
    original = await served(source, apiKey);
    assert.equal(original.keyStatus, 200);
  });
  after(async () => {
    await stopAll();
    for (const d of dirs) removeDataDir(d);
  });

  test('a data directory to another: same answers, key and secrets (re-sealed with the new secret.key)', async () => {
    const target = dir('refdesk-migrate-dst-');
    const r = await runRefdesk(['migrate-store', '--from', source, '--to', target], source, 300_000);
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, /3 libraries, 0 aliases/);
    assert.match(r.stdout, /2 served versions \(\d+ snippets\)/);
    assert.match(r.stdout, /1 API key\b/);
    for (const out of [r.stdout, r.stderr]) {
      assert.ok(!out.includes(PLANTED_GIT) && !out.includes(PLANTED_SPEC), 'a planted secret was printed');
    }
    assert.notEqual(readFileSync(join(target, 'secret.key'), 'utf8'), readFileSync(join(source, 'secret.key'), 'utf8'));

    const store = openStore(target);
    await store.open();
    const spec = (await store.getLibrary('/acme/private'))!.source.spec;
    const git = await store.getSetting('git');
    assert.equal(await store.getSetting(TRANSFER_MARKER), undefined);
    await store.close();
    assert.deepEqual(openPlanted(git, spec, dataDirSecretBox(target, null)), [PLANTED_GIT, PLANTED_SPEC]);

    assert.deepEqual(await storedDocsServed(source), [true, true]);
    assert.deepEqual(await storedDocsServed(target), [true, true], 'the stored documents moved with their builds');

    const moved = await served(target, apiKey);
    assert.deepEqual(moved.bodies, original.bodies);
    assert.equal(moved.libraries, original.libraries);
    assert.equal(moved.keyStatus, 200);
    assert.ok(!moved.logs.includes(PLANTED_GIT) && !moved.logs.includes(PLANTED_SPEC));

    // Moving again into it: refused (not empty), then replaced with --force.
    const again = await runRefdesk(['migrate-store', '--from', source, '--to', target], source, 300_000);
    assert.equal(again.code, 1, show(again));
    assert.match(again.stderr, /already holds .*--force/);
    const forced = await runRefdesk(['migrate-store', '--from', source, '--to', target, '--force'], source, 300_000);
    assert.equal(forced.code, 0, show(forced));
    assert.deepEqual((await served(target, apiKey)).bodies, original.bodies);
  });

  test('a move that fails half-way leaves a target that is recognised, refused, and redone with --force', async () => {
    // A copy of the source whose sealing key is wrong: the move stops at the first sealed secret.
    const broken = dir('refdesk-migrate-broken-');
    const target = dir('refdesk-migrate-half-');
    const copy = await runRefdesk(['migrate-store', '--from', source, '--to', broken], source, 300_000);
    assert.equal(copy.code, 0, show(copy));
    const goodKey = readFileSync(join(broken, 'secret.key'), 'utf8');
    writeFileSync(join(broken, 'secret.key'), randomBytes(32).toString('base64') + '\n');

    const failed = await runRefdesk(['migrate-store', '--from', broken, '--to', target], source, 300_000);
    assert.equal(failed.code, 1, show(failed));
    assert.match(failed.stderr, /secret cannot be opened/);
    assert.match(failed.stderr, /half-written.*--force/);

    const refused = await runRefdesk(['migrate-store', '--from', broken, '--to', target], source, 300_000);
    assert.equal(refused.code, 1, show(refused));
    assert.match(refused.stderr, /left half-written by a migrate-store that did not finish/);

    writeFileSync(join(broken, 'secret.key'), goodKey);
    const redone = await runRefdesk(['migrate-store', '--from', broken, '--to', target, '--force'], source, 300_000);
    assert.equal(redone.code, 0, show(redone));
    assert.deepEqual((await served(target, apiKey)).bodies, original.bodies);
  });

  describe('to PostgreSQL and back', { skip: postgresSkipReason() }, () => {
    let postgres: TestPostgres;
    before(async () => {
      postgres = await startPostgres();
    });
    after(async () => {
      await postgres?.stop();
    });

    test('answers, key and secrets are the same on PostgreSQL (sealed with ENCRYPTION_KEY) and in a fresh data directory after', async () => {
      const url = await postgres.createDatabase('migrate_store');
      const withoutKey = await runRefdesk(['migrate-store', '--from', source, '--to', url], source, 120_000, { ENCRYPTION_KEY: '' });
      assert.equal(withoutKey.code, 1, show(withoutKey));
      assert.match(withoutKey.stderr, /ENCRYPTION_KEY is not set/);

      const to = await runRefdesk(['migrate-store', '--from', source, '--to', url], source, 600_000, { ENCRYPTION_KEY });
      assert.equal(to.code, 0, show(to));
      assert.match(to.stdout, /3 libraries/);
      for (const out of [to.stdout, to.stderr]) assert.ok(!out.includes(PLANTED_GIT) && !out.includes(PLANTED_SPEC));

      // Into the same database again: refused, then replaced (TRUNCATE of every table) with --force.
      const again = await runRefdesk(['migrate-store', '--from', source, '--to', url], source, 120_000, { ENCRYPTION_KEY });
      assert.equal(again.code, 1, show(again));
      assert.match(again.stderr, /already holds .*--force/);
      const forced = await runRefdesk(['migrate-store', '--from', source, '--to', url, '--force'], source, 600_000, { ENCRYPTION_KEY });
      assert.equal(forced.code, 0, show(forced));
      assert.equal(forced.stdout.replace(/^Moved from .*\n/, ''), to.stdout.replace(/^Moved from .*\n/, ''), 'the same counts');

      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const git = (await client.query("SELECT value FROM settings WHERE key = 'git'")).rows[0]?.value;
        const spec = (await client.query("SELECT source_spec FROM libraries WHERE id = '/acme/private'")).rows[0]?.source_spec;
        assert.deepEqual(openPlanted(git, spec, createSecretBox(parseSecretKey({ value: ENCRYPTION_KEY, name: 'ENCRYPTION_KEY' }))), [PLANTED_GIT, PLANTED_SPEC]);
        const docs = await client.query("SELECT v.library_id, count(c.*)::int AS n FROM versions v LEFT JOIN document_chunks c ON c.build_id = v.active_build_id WHERE v.library_id IN ('/docs/koa', '/docs/zod') GROUP BY v.library_id ORDER BY v.library_id");
        assert.deepEqual(docs.rows.map((r) => [r.library_id, r.n > 0]), [['/docs/koa', true], ['/docs/zod', true]], 'the stored documents are in the database');
      } finally {
        await client.end();
      }

      const node = dir('refdesk-migrate-node-');
      const onPg = await served(node, apiKey, { DATABASE_URL: url, ENCRYPTION_KEY });
      assert.deepEqual(onPg.bodies, original.bodies);
      assert.equal(onPg.libraries, original.libraries);
      assert.equal(onPg.keyStatus, 200);
      assert.ok(!onPg.logs.includes(PLANTED_GIT) && !onPg.logs.includes(PLANTED_SPEC));

      const back = dir('refdesk-migrate-back-');
      const from = await runRefdesk(['migrate-store', '--from', url, '--to', back], source, 600_000, { ENCRYPTION_KEY });
      assert.equal(from.code, 0, show(from));
      const store = openStore(back);
      await store.open();
      const spec = (await store.getLibrary('/acme/private'))!.source.spec;
      const git = await store.getSetting('git');
      await store.close();
      assert.deepEqual(openPlanted(git, spec, dataDirSecretBox(back, null)), [PLANTED_GIT, PLANTED_SPEC]);
      assert.deepEqual(await storedDocsServed(back), [true, true]);
      const restored = await served(back, apiKey);
      assert.deepEqual(restored.bodies, original.bodies);
      assert.equal(restored.libraries, original.libraries);
      assert.equal(restored.keyStatus, 200);
    });
  });
});
