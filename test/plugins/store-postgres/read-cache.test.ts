/**
 * The per-node memory of per-request reads (plugins/store-postgres/read-cache.ts) and of library
 * records (PgCatalogCache, catalog.ts), without a database: loaders of the test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LibraryRecord } from '../../../core/contracts.ts';
import { PgCatalogCache } from '../../../plugins/store-postgres/catalog.ts';
import { ReadCache } from '../../../plugins/store-postgres/read-cache.ts';

test('answers from memory until forgotten, cleared or too old', async () => {
  let t = 0;
  let reads = 0;
  const cache = new ReadCache<string, string>({ maxAgeMs: 1000, now: () => t });
  const read = async (k: string) => `${k}#${++reads}`;
  assert.equal(await cache.get('a', read), 'a#1');
  assert.equal(await cache.get('a', read), 'a#1');
  cache.forget('a');
  assert.equal(await cache.get('a', read), 'a#2');
  cache.clear();
  assert.equal(await cache.get('a', read), 'a#3');
  t = 999;
  assert.equal(await cache.get('a', read), 'a#3');
  t = 1000;
  assert.equal(await cache.get('a', read), 'a#4', 'an entry as old as maxAgeMs is read again');
  assert.deepEqual(cache.stats, { hits: 2, misses: 4 });
});

test('a read in flight when its entry is dropped does not store what it read', async () => {
  const cache = new ReadCache<string, number>();
  let release!: () => void;
  const slow = cache.get('k', () => new Promise<number>((r) => (release = () => r(1))));
  cache.forget('k'); // the change lands while the old value is being read
  release();
  assert.equal(await slow, 1);
  assert.equal(await cache.get('k', async () => 2), 2, 'the old value was not kept');
});

test('at most max entries: the memory starts over beyond it', async () => {
  const cache = new ReadCache<number, number>({ max: 3 });
  let reads = 0;
  const read = async (k: number) => (reads++, k);
  for (const k of [1, 2, 3, 4]) await cache.get(k, read);
  assert.equal(reads, 4);
  await cache.get(4, read);
  assert.equal(reads, 4, 'the newest stays');
  await cache.get(1, read);
  assert.equal(reads, 5, 'the oldest went with the rest');
});

test('a failing read of an expired entry serves the old value and keeps it another maxAgeMs; with nothing to serve it throws', async () => {
  let t = 0;
  let up = true;
  const cache = new ReadCache<string, string>({ maxAgeMs: 1000, now: () => t });
  const read = async (k: string) => {
    if (!up) throw new Error('database unavailable');
    return `${k}@${t}`;
  };
  assert.equal(await cache.get('a', read), 'a@0');
  up = false;
  t = 1500;
  assert.equal(await cache.get('a', read), 'a@0', 'the old value while the database is away');
  t = 2000;
  assert.equal(await cache.get('a', read), 'a@0');
  assert.equal(cache.stats.hits, 1, 'kept for another maxAgeMs: no second attempt at once');
  await assert.rejects(cache.get('b', read), /database unavailable/);
  up = true;
  t = 2500;
  assert.equal(await cache.get('a', read), 'a@2500');
});

test('the catalog records: a change during a load stays stale; all read again once maxAgeMs old; kept when that reload fails', async () => {
  let t = 0;
  let up = true;
  const db = new Map([['/a', 'one']]);
  let release: (() => void) | null = null;
  const record = (id: string) => ({ ...lib(id), description: db.get(id)! });
  const cache = new PgCatalogCache(
    async (id) => {
      if (!up) throw new Error('database unavailable');
      const rows = [...db.keys()].filter((k) => id === null || k === id).map(record);
      if (release === null) return rows;
      await new Promise<void>((r) => (release = r));
      return rows;
    },
    1000,
    () => t,
  );
  assert.equal((await cache.one('/a'))?.description, 'one');
  // A reload in flight, and a change committed (and published) meanwhile.
  cache.touch('/a');
  release = () => {};
  const reading = cache.one('/a');
  await new Promise((r) => setImmediate(r));
  db.set('/a', 'two');
  cache.touch('/a');
  const go = release as () => void;
  release = null;
  go();
  await reading;
  assert.equal((await cache.one('/a'))?.description, 'two', 'the touch during the load was kept');

  db.set('/b', 'new');
  assert.equal(await cache.one('/b'), null, 'not told: not seen yet');
  t = 1000;
  assert.equal((await cache.one('/b'))?.description, 'new', 'everything read again once maxAgeMs old');
  const loads = cache.stats.loads;
  up = false;
  t = 2000;
  assert.deepEqual((await cache.all()).map((r) => r.id), ['/a', '/b'], 'kept while the database is away');
  assert.equal(cache.stats.loads, loads);
});

function lib(id: string): LibraryRecord {
  return {
    id,
    title: id,
    description: '',
    branch: '',
    lastUpdateDate: null,
    state: 'initial',
    totalTokens: 0,
    totalSnippets: 0,
    stars: 0,
    trustScore: 0,
    benchmarkScore: 0,
    versions: [],
    source: { kind: 'upload', spec: {} },
    createdAt: '2026-01-01T00:00:00.000Z',
  };
}
