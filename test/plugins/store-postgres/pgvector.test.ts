/**
 * The pgvector SQL of the PostgreSQL store (migrations/002_vectors.sql) on PGlite with its
 * bundled `vector` extension, served over the wire protocol by pglite-socket and reached through
 * node-postgres with a pool of one (test/helpers/pglite.ts): the migrations apply the extension,
 * table and HNSW indexes, a nearest-neighbour query uses the index of its dimension and returns
 * the right row, and a vector of the wrong dimension is refused.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { migrate, schemaStatus } from '../../../plugins/store-postgres/migrate.ts';
import { createPool, type PostgresPool } from '../../../plugins/store-postgres/pool.ts';
import { startPglite, type TestPglite } from '../../helpers/pglite.ts';

/** A deterministic unit-ish vector of `dims` numbers for seed `i` (a tiny LCG: no dependency). */
function vec(dims: number, i: number): number[] {
  let s = (i + 1) * 2654435761;
  const out: number[] = [];
  for (let d = 0; d < dims; d++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    out.push(s / 2147483648 - 0.5);
  }
  return out;
}
const literal = (v: number[]) => `[${v.map((x) => x.toFixed(6)).join(',')}]`;

describe('store-postgres pgvector SQL on PGlite over the wire protocol', () => {
  let lite: TestPglite;
  let db: PostgresPool;

  before(async () => {
    lite = await startPglite();
    db = createPool(lite.url, { max: 1 });
  });
  after(async () => {
    await db?.end().catch(() => undefined);
    await lite?.stop();
  });

  test('the migrations create the extension, the table and an HNSW index per dimension', async () => {
    const result = await migrate(db);
    // 1 and 2 first; the later files (003 onwards) all applied too.
    assert.deepEqual(result.ran.slice(0, 2), [
      { version: 1, name: 'core', status: 'applied' },
      { version: 2, name: 'vectors', status: 'applied' },
    ]);
    assert.ok(result.ran.every((r) => r.status === 'applied'));
    assert.equal((await db.pool.query(`SELECT 1 FROM pg_extension WHERE extname = 'vector'`)).rowCount, 1);
    const indexes = (await db.pool.query<{ name: string; def: string }>(`SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE tablename = 'snippet_vectors' AND indexdef LIKE '%hnsw%' ORDER BY indexname`)).rows;
    assert.deepEqual(
      indexes.map((i) => i.name),
      ['snippet_vectors_hnsw_1024', 'snippet_vectors_hnsw_1536', 'snippet_vectors_hnsw_3072', 'snippet_vectors_hnsw_384', 'snippet_vectors_hnsw_768'],
    );
    assert.match(indexes.find((i) => i.name === 'snippet_vectors_hnsw_3072')!.def, /halfvec\(3072\).*halfvec_cosine_ops.*WHERE \(dimensions = 3072\)/);
    assert.deepEqual((await schemaStatus(db)).pending, []);
  });

  test('a nearest-neighbour query uses its dimension\'s HNSW index and finds the right row', async () => {
    const dims = 384;
    await db.pool.query(`INSERT INTO libraries (id, title, source_kind) VALUES ('/acme/widgets', 'Widgets', 'upload')`);
    await db.pool.query(`INSERT INTO builds (id, library_id, version, state, embedding_model, embedding_dimensions) VALUES ('b1', '/acme/widgets', '', 'finalized', 'test-384', $1)`, [dims]);
    // Another model's rows in the same table (another dimension) must not disturb the query.
    await db.pool.query(`INSERT INTO builds (id, library_id, version, state, embedding_model, embedding_dimensions) VALUES ('b2', '/acme/widgets', 'v2', 'finalized', 'test-768', 768)`);
    for (let i = 0; i < 60; i++) {
      await db.pool.query(`INSERT INTO snippet_vectors (build_id, ordinal, model, dimensions, embedding) VALUES ('b1', $1, 'test-384', $2, $3::vector)`, [i, dims, literal(vec(dims, i))]);
    }
    for (let i = 0; i < 5; i++) {
      await db.pool.query(`INSERT INTO snippet_vectors (build_id, ordinal, model, dimensions, embedding) VALUES ('b2', $1, 'test-768', 768, $2::vector)`, [i, literal(vec(768, i))]);
    }
    // The query: row 37's vector, nudged a little, must find row 37 first.
    const target = vec(dims, 37).map((x, d) => x + (d % 7 === 0 ? 0.01 : 0));
    const query = `SELECT ordinal FROM snippet_vectors
      WHERE dimensions = ${dims} AND build_id = 'b1'
      ORDER BY embedding::vector(${dims}) <=> $1::vector(${dims}) LIMIT 3`;
    await db.withClient(async (c) => {
      // With 60 rows the planner prefers a scan and a sort; forbid both so the plan shows the index is usable.
      await c.query('SET enable_seqscan = off');
      await c.query('SET enable_sort = off');
      try {
        const plan = (await c.query(`EXPLAIN ${query.replace('$1', `'${literal(target)}'`)}`)).rows.map((r) => r['QUERY PLAN']).join('\n');
        assert.match(plan, /Index Scan using snippet_vectors_hnsw_384/, plan);
        const rows = (await c.query(query, [literal(target)])).rows;
        assert.equal(rows[0].ordinal, 37, JSON.stringify(rows));
      } finally {
        await c.query('RESET enable_seqscan');
        await c.query('RESET enable_sort');
      }
    });
  });

  test('a vector whose dimension differs from its row\'s is refused', async () => {
    await assert.rejects(
      db.pool.query(`INSERT INTO snippet_vectors (build_id, ordinal, model, dimensions, embedding) VALUES ('b1', 999, 'test-384', 384, $1::vector)`, [literal(vec(3, 1))]),
      /check constraint/,
    );
  });

  test('deleting a build removes its vectors', async () => {
    await db.pool.query(`DELETE FROM builds WHERE id = 'b2'`);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM snippet_vectors WHERE build_id = 'b2'`)).rows[0].n, 0);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM snippet_vectors WHERE build_id = 'b1'`)).rows[0].n, 60);
  });
});
