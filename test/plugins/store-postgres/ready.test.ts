/**
 * Issue 24, readiness of a node on the PostgreSQL store, over real HTTP on 127.0.0.1 with the
 * server's own middleware (server/routes/health.ts, server/errors.ts) and a PostgresStore on
 * Debian's PostgreSQL server: GET /api/ready reports the database and migrations; when the
 * cluster is stopped under the running store it answers 503 `database_unavailable` (and a
 * request that needs the database answers 503 too, never 500) while /api/health stays 200;
 * when the cluster is started again it recovers on its own, with no unhandled rejection. A
 * database that lacks a migration is 503 `database_not_migrated`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { errorMiddleware } from '../../../server/errors.ts';
import { healthMiddleware } from '../../../server/routes/health.ts';
import { loadMigrations } from '../../../plugins/store-postgres/migrate.ts';
import type { PostgresStore } from '../../../plugins/store-postgres/store.ts';
import { memoryLogger } from '../store-embedded/helpers.ts';
import { postgresSkipReason } from '../../helpers/postgres.ts';
import { freshDatabaseUrl, pgStore, testCluster } from './helpers.ts';
import { waitFor } from './pg-node.ts';

const LATEST = loadMigrations().at(-1)!.version;

interface Node {
  base: string;
  store: PostgresStore;
  log: ReturnType<typeof memoryLogger>;
}

describe('/api/ready on the PostgreSQL store (Debian PostgreSQL)', { skip: postgresSkipReason() }, () => {
  const servers: Server[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);

  before(() => {
    process.on('unhandledRejection', onUnhandled);
  });
  after(async () => {
    process.off('unhandledRejection', onUnhandled);
    for (const s of servers) await new Promise((r) => s.close(r));
    for (const c of cleanups) await c();
  });

  /** A node: the store opened on a fresh database, the health and error middleware, and one route that reads a job. */
  async function node(): Promise<Node> {
    const url = await freshDatabaseUrl();
    const { store, remove } = await pgStore(url, { pollMs: 200 });
    await store.open();
    cleanups.push(async () => {
      await store.close();
      await remove();
    });
    const log = memoryLogger();
    const app = new Koa();
    app.use(errorMiddleware(log));
    app.use(healthMiddleware({ store, dataDir: store.database.cacheDir, jobsAlive: () => true, minFreeDiskBytes: 0, storeKind: 'postgres' }));
    app.use(async (ctx) => {
      if (ctx.path !== '/api/jobs/lookup') return;
      ctx.body = { job: await store.getJob(String(ctx.query.id)) };
    });
    const server = createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, store, log };
  }

  async function get(base: string, path: string) {
    const res = await fetch(base + path);
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
  }

  test('200 with the database and migration state while the database answers', async () => {
    const n = await node();
    const r = await get(n.base, '/api/ready');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.ready, true);
    assert.equal(r.body.status, 'ready');
    assert.equal(r.body.checks.store, 'ok');
    assert.equal(r.body.store.kind, 'postgres');
    assert.equal(r.body.store.database, 'ok');
    assert.equal(r.body.store.changeFeed, 'listen');
    assert.equal(r.body.store.migrations.version, LATEST);
    assert.equal(r.body.store.migrations.latest, LATEST);
    assert.deepEqual([...r.body.store.migrations.applied, ...r.body.store.migrations.skipped].sort((a: number, b: number) => a - b), loadMigrations().map((m) => m.version));
    assert.equal(r.body.store.error, undefined);
  });

  test('the cluster stopped under a running store: 503 database_unavailable (ready and a job read), health 200; started again: 200 on its own', async () => {
    const cluster = await testCluster();
    const n = await node();
    assert.equal((await get(n.base, '/api/ready')).status, 200);
    assert.equal((await get(n.base, '/api/jobs/lookup?id=job_1')).status, 200);
    await cluster.halt();
    try {
      const r = await get(n.base, '/api/ready');
      assert.equal(r.status, 503, JSON.stringify(r.body));
      assert.equal(r.body.error, 'database_unavailable');
      assert.equal(r.body.ready, false);
      assert.equal(r.body.status, 'unavailable');
      assert.equal(r.body.checks.store, 'failed');
      assert.equal(r.body.store.database, 'unavailable');
      assert.equal(r.body.store.error.error, 'database_unavailable');
      assert.match(r.body.message, /store: Cannot reach PostgreSQL at 127\.0\.0\.1:\d+\/store_\d+_\d+/);
      const read = await get(n.base, '/api/jobs/lookup?id=job_2');
      assert.equal(read.status, 503, JSON.stringify(read.body));
      assert.deepEqual(read.body, { error: 'database_unavailable', message: 'This server cannot reach its database right now; retry in a few seconds.' });
      assert.equal(read.headers.get('retry-after'), '5');
      assert.equal((await get(n.base, '/api/jobs/lookup?id=job_3')).status, 503);
      const warned = n.log.entries.filter((l) => /database is unavailable/.test(l.message));
      assert.equal(warned.length, 1, 'an outage is logged once, not once per request');
      assert.equal(warned[0].fields?.code, 'database_unavailable');
      const health = await fetch(n.base + '/api/health');
      assert.equal(health.status, 200, 'liveness does not depend on the database');
    } finally {
      await cluster.restart();
    }
    await waitFor(async () => (await get(n.base, '/api/ready')).status === 200, 15_000, '/api/ready 200 again');
    assert.equal((await get(n.base, '/api/jobs/lookup?id=job_1')).status, 200);
    await waitFor(() => n.store.database.changeFeed?.isListening === true, 15_000, 'the change feed listening again');
    assert.equal((await get(n.base, '/api/ready')).body.store.changeFeed, 'listen');
    assert.deepEqual(unhandled, [], 'no unhandled rejection');
  });

  test('a database missing a migration: 503 database_not_migrated', async () => {
    const n = await node();
    await n.store.database.query('DELETE FROM schema_migrations WHERE version = $1', [LATEST]);
    const r = await get(n.base, '/api/ready');
    assert.equal(r.status, 503);
    assert.equal(r.body.error, 'database_not_migrated');
    assert.equal(r.body.store.database, 'not_migrated');
    assert.match(r.body.store.error.message, new RegExp(`lacks schema version ${LATEST}: run \`refdesk db migrate\``));
  });

  test('a closed store is not ready (no throw)', async () => {
    const n = await node();
    await n.store.close();
    const r = await get(n.base, '/api/ready');
    assert.equal(r.status, 503);
    assert.equal(r.body.error, 'database_unavailable');
    assert.match(r.body.store.error.message, /closed/);
  });
});
