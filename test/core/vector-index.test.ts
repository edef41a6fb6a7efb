import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VECTRA_MAX_FLOATS, VectorIndexError, chooseVectorIndex, normalise, openVectorIndex, readVectorRows, writeVectorIndex } from '../../core/vector-index.ts';
import { fuseRrf } from '../../core/hybrid.ts';
import type { SearchHit, StoredSnippet } from '../../core/contracts.ts';
import { hashEmbedding } from '../helpers/hash-embedding.ts';

const TEXTS = ['koa router params', 'error handling middleware', 'cookies signed keys', 'static file server', 'body parser json', 'router nested prefix', 'context state object'];
const vectors = TEXTS.map((t) => hashEmbedding(t, 64).map((x, i) => x * (1 + (i % 3)))); // not unit length: the index normalises

function withDir(fn: (dir: string) => Promise<void>) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'refdesk-vi-'));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

test('vector index: vectra and flat answer the same top-k by cosine, best first', withDir(async (dir) => {
  const q = hashEmbedding('router params', 64);
  const found: Record<string, Array<{ position: number; score: number }>> = {};
  for (const kind of ['vectra', 'flat'] as const) {
    const sub = join(dir, kind);
    mkdirSync(sub);
    const checksum = await writeVectorIndex(kind, sub, 64, vectors);
    const index = await openVectorIndex(kind, sub, 64, vectors.length, checksum);
    assert.equal(index.kind, kind);
    found[kind] = await index.query(q, 3);
    assert.deepEqual(await index.query(new Float32Array(8), 3), [], 'a vector of another dimension finds nothing');
    const rows = await readVectorRows(kind, sub, 64, vectors.length, checksum);
    rows.forEach((r, i) => r.forEach((x, j) => assert.ok(Math.abs(x - normalise(vectors[i])[j]) < 1e-6)));
  }
  assert.deepEqual(found.vectra.map((h) => h.position), found.flat.map((h) => h.position));
  assert.equal(found.flat[0].position, 0, 'koa router params is nearest to router params');
  found.flat.forEach((h, i) => assert.ok(Math.abs(h.score - found.vectra[i].score) < 1e-5));
  for (let i = 1; i < found.flat.length; i++) assert.ok(found.flat[i - 1].score >= found.flat[i].score);
}));

test('vector index: a damaged or truncated file is refused, never served', withDir(async (dir) => {
  for (const [kind, file] of [['flat', 'vectors.f32'], ['vectra', 'index.json']] as const) {
    const sub = join(dir, kind);
    mkdirSync(sub);
    const checksum = await writeVectorIndex(kind, sub, 64, vectors);
    const bytes = readFileSync(join(sub, file));
    bytes[bytes.length - 3] ^= 0x55;
    writeFileSync(join(sub, file), bytes);
    await assert.rejects(openVectorIndex(kind, sub, 64, vectors.length, checksum), VectorIndexError);
    await assert.rejects(readVectorRows(kind, sub, 64, vectors.length, checksum), VectorIndexError);
    rmSync(join(sub, file));
    await assert.rejects(openVectorIndex(kind, sub, 64, vectors.length, checksum), /cannot be read/);
  }
}));

test('vector index: the kind is chosen by size (count x dimensions)', () => {
  assert.equal(chooseVectorIndex(1000, 256), 'vectra');
  assert.equal(chooseVectorIndex(1001, 256), 'flat');
  assert.equal(chooseVectorIndex(200, 1536), 'flat');
  assert.equal(chooseVectorIndex(Math.floor(VECTRA_MAX_FLOATS / 1536), 1536), 'vectra');
});

function snippet(id: number): StoredSnippet {
  return { id, seq: id, type: 'info', title: `s${id}`, description: '', language: '', code: '', content: `c${id}`, breadcrumb: [`s${id}`], pageTitle: 'p', sourcePath: 'p.md', lineStart: id, lineEnd: id, tokens: 1 };
}

test('fusion: reciprocal ranks add up; lexical hits keep their unit; vector-only hits join', () => {
  const lexical: SearchHit[] = [
    { snippet: snippet(1), score: 9 },
    { snippet: snippet(2), score: 8, unit: { key: 'k2', breadcrumb: ['s2'] } },
    { snippet: snippet(3), score: 7 },
  ];
  const fused = fuseRrf(lexical, [snippet(3), snippet(4), snippet(2)], 10);
  assert.deepEqual(fused.map((h) => h.snippet.id), [3, 2, 1, 4]);
  assert.deepEqual(fused.find((h) => h.snippet.id === 2)?.unit, { key: 'k2', breadcrumb: ['s2'] });
  assert.ok(Math.abs(fused[0].score - (1 / 63 + 1 / 61)) < 1e-12);
  assert.deepEqual(fuseRrf(lexical, [], 2).map((h) => h.snippet.id), [1, 2], 'no vector hits: the lexical order, cut to the limit');
});
