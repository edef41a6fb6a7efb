/**
 * Choosing the PostgreSQL store: DATABASE_URL makes `postgres` the store unless a config names
 * one; the plugin refuses to start without ENCRYPTION_KEY; a real `refdesk serve` with
 * DATABASE_URL serves /ping and lists libraries kept in PostgreSQL (Debian's server, a throwaway
 * cluster), `refdesk libraries` too; database errors stop the start with one line that never
 * carries the password.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultConfigPath, loadConfig } from '../../../core/config.ts';
import { RefdeskError } from '../../../core/errors.ts';
import postgresPlugin from '../../../plugins/store-postgres/index.ts';
import { PostgresStoreError } from '../../../plugins/store-postgres/pool.ts';
import { describeStartupError } from '../../../server/startup-error.ts';
import { makeDataDir, removeDataDir, runRefdesk, startServer, stopAll } from '../../e2e/refdesk-process.ts';
import { freePort, postgresSkipReason } from '../../helpers/postgres.ts';
import { memoryLogger, realClock } from '../store-embedded/helpers.ts';
import { freshDatabaseUrl, pgStore } from './helpers.ts';

const PASSWORD = 'Planted-Secret-c41d7e';
const KEY = randomBytes(32).toString('base64');
const URL_OF_NOTHING = 'postgres://refdesk@127.0.0.1:1/refdesk';

const dirs: string[] = [];
after(async () => {
  await stopAll();
  for (const d of dirs) removeDataDir(d);
});

function configFile(yaml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-pgsel-'));
  dirs.push(dir);
  const file = join(dir, 'refdesk.yaml');
  writeFileSync(file, yaml);
  return file;
}

describe('DATABASE_URL selects the postgres store', () => {
  test('the default config: embedded without DATABASE_URL, postgres with it', async () => {
    assert.equal((await loadConfig(defaultConfigPath(), {})).config.slots.store, 'embedded');
    assert.equal((await loadConfig(defaultConfigPath(), { DATABASE_URL: '  ' })).config.slots.store, 'embedded');
    const loaded = await loadConfig(defaultConfigPath(), { DATABASE_URL: URL_OF_NOTHING });
    assert.equal(loaded.config.slots.store, 'postgres');
    assert.ok(loaded.definitions.get('store')!.has('postgres'));
  });

  test('a config that names a store keeps it; one that extends the default without naming one follows DATABASE_URL', async () => {
    const pinned = configFile(`extends: default\nslots:\n  store: embedded\n`);
    assert.equal((await loadConfig(pinned, { DATABASE_URL: URL_OF_NOTHING })).config.slots.store, 'embedded');
    const follows = configFile(`extends: default\nquery:\n  defaultTokens: 4000\n`);
    assert.equal((await loadConfig(follows, { DATABASE_URL: URL_OF_NOTHING })).config.slots.store, 'postgres');
  });

  test('DATABASE_URL with a config that has no postgres store plugin: a clear config error', async () => {
    const without = configFile(`extends: default\nremove: [store-postgres]\n`);
    assert.equal((await loadConfig(without, {})).config.slots.store, 'embedded');
    await assert.rejects(loadConfig(without, { DATABASE_URL: URL_OF_NOTHING }), (e: Error) => {
      assert.match(e.message, /DATABASE_URL is set, so the store is "postgres", but no enabled plugin provides it: list store-postgres/);
      assert.ok(!e.message.includes('127.0.0.1:1'), 'the URL is not quoted');
      return true;
    });
  });

  test('a PostgreSQL store error during a command is one line as it is, not an unexpected error', () => {
    const e = new PostgresStoreError('database_unavailable', 'Cannot reach PostgreSQL at db:5432/refdesk (connection refused); check DATABASE_URL and that the server is running.');
    assert.equal(describeStartupError(e), e.message);
  });

  test('the plugin refuses to create the store without ENCRYPTION_KEY, or with a malformed one', async () => {
    const def = postgresPlugin.definitions[0];
    const deps = { env: { dataDir: tmpdir(), mode: 'server' as const }, logger: memoryLogger(), clock: realClock };
    const saved = { ENCRYPTION_KEY: process.env.ENCRYPTION_KEY, REFDESK_SECRET_KEY: process.env.REFDESK_SECRET_KEY, DATABASE_URL: process.env.DATABASE_URL };
    try {
      delete process.env.ENCRYPTION_KEY;
      delete process.env.REFDESK_SECRET_KEY;
      process.env.DATABASE_URL = URL_OF_NOTHING;
      await assert.rejects(Promise.resolve().then(() => def.create({} as never, deps as never)), (e: RefdeskError) => {
        assert.equal(e.code, 'config_error');
        assert.match(e.message, /needs ENCRYPTION_KEY, the same on every node/);
        return true;
      });
      process.env.ENCRYPTION_KEY = 'too-short';
      await assert.rejects(Promise.resolve().then(() => def.create({} as never, deps as never)), /ENCRYPTION_KEY must be 32 bytes/);
      process.env.ENCRYPTION_KEY = KEY;
      const store = (await def.create({} as never, deps as never)) as { close(): Promise<void> };
      assert.equal(typeof store.close, 'function');
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});

describe('refdesk processes on PostgreSQL (Debian server)', { skip: postgresSkipReason() }, () => {
  test('refdesk serve with DATABASE_URL serves /ping and the libraries kept in PostgreSQL; refdesk libraries lists them', async () => {
    const url = await freshDatabaseUrl();
    // A library written by another node (a store of this test) before the server starts.
    const seeded = await pgStore(url);
    await seeded.store.open();
    await seeded.store.upsertLibrary({ id: '/docs/from-postgres', title: 'From PostgreSQL', source: { kind: 'upload', spec: {} } });
    await seeded.store.close();
    await seeded.remove();

    const dataDir = makeDataDir('refdesk-pg-serve-');
    dirs.push(dataDir);
    // Trust auth: the password is ignored by the server but travels in the URL the node gets.
    const env = { DATABASE_URL: url.replace('postgres@', `postgres:${PASSWORD}@`), ENCRYPTION_KEY: KEY };
    const server = await startServer(dataDir, 60_000, env);
    try {
      const ping = await fetch(`${server.base}/ping`);
      assert.equal(ping.status, 200);
      const res = await fetch(`${server.base}/api/libraries`, { headers: server.adminAuth });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { libraries: Array<{ id: string; title: string }> };
      assert.deepEqual(
        body.libraries.map((l) => [l.id, l.title]),
        [['/docs/from-postgres', 'From PostgreSQL']],
      );
      assert.ok(!(server.stdout() + server.stderr()).includes(PASSWORD));
    } finally {
      await server.stop();
    }
    const listed = await runRefdesk(['libraries'], dataDir, 60_000, env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /\/docs\/from-postgres/);
    assert.ok(!(listed.stdout + listed.stderr).includes(PASSWORD));
  });

  test('without ENCRYPTION_KEY, or with the database out of reach, the start stops with one line and no password', async () => {
    const dataDir = makeDataDir('refdesk-pg-refused-');
    dirs.push(dataDir);
    const port = await freePort();
    const noKey = await runRefdesk(['serve'], dataDir, 60_000, { DATABASE_URL: `postgres://refdesk:${PASSWORD}@127.0.0.1:${port}/refdesk`, ENCRYPTION_KEY: '', REFDESK_SECRET_KEY: '' });
    assert.equal(noKey.code, 1, noKey.stdout + noKey.stderr);
    assert.match(noKey.stderr, /needs ENCRYPTION_KEY, the same on every node/);
    const unreachable = await runRefdesk(['serve'], dataDir, 60_000, { DATABASE_URL: `postgres://refdesk:${PASSWORD}@127.0.0.1:${port}/refdesk`, ENCRYPTION_KEY: KEY });
    assert.equal(unreachable.code, 1, unreachable.stdout + unreachable.stderr);
    assert.match(unreachable.stderr, new RegExp(`refdesk: The PostgreSQL store cannot open its database: Cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port}/refdesk \\(connection refused\\)`));
    const cli = await runRefdesk(['libraries'], dataDir, 60_000, { DATABASE_URL: `postgres://refdesk:${PASSWORD}@127.0.0.1:${port}/refdesk`, ENCRYPTION_KEY: KEY });
    assert.equal(cli.code, 1, cli.stdout + cli.stderr);
    assert.match(cli.stderr, /Cannot reach PostgreSQL at 127\.0\.0\.1:\d+\/refdesk/);
    for (const r of [noKey, unreachable, cli]) {
      assert.ok(!(r.stdout + r.stderr).includes(PASSWORD), r.stderr);
      assert.ok(!/Unexpected error|\n\s+at /.test(r.stderr), `one line, no stack: ${r.stderr}`);
    }
  });
});
