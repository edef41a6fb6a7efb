/**
 * Finalizing a build computes and writes its index segment in a worker thread (issue 17: no
 * event-loop stall while a large build is finalized); the result is the segment the main thread
 * would have written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Snippet } from '../../../core/contracts.ts';
import { sampleSnippet } from '../../../core/testing/store-contract.ts';
import { computeIndexData } from '../../../core/search/index-data.ts';
import { DEFAULT_BM25 } from '../../../core/search/lexical-index.ts';
import { runWorkerTask, workerUrl } from '../../../core/worker-task.ts';
import { SEGMENT_DIR, encodeSegment } from '../../../plugins/store-embedded/segment.ts';
import { WRITER_MAIN_THREAD_SNIPPETS } from '../../../plugins/store-embedded/builds.ts';
import { makeStore, memoryLogger, tempDataDir, type LogEntry } from './helpers.ts';

const snippets = (n: number): Snippet[] =>
  Array.from({ length: n }, (_, i) => ({
    ...sampleSnippet({ title: `Section ${i}`, content: `Paragraph ${i} about widgets, gadgets and frobnicator level ${i % 7}.` }),
    breadcrumb: [`Page ${i % 5}`, `Section ${i}`],
    sourcePath: `page-${i % 5}.md`,
    lineStart: i + 1,
    lineEnd: i + 2,
  }));

test('the segment is built in a worker thread, byte for byte the one the main thread would write', async () => {
  const data = await tempDataDir();
  const logs: LogEntry[] = [];
  const store = makeStore(data.dir, 'writer', {}, { logger: memoryLogger(logs) });
  await store.open();
  try {
    await store.upsertLibrary({ id: '/docs/w', title: 'w', source: { kind: 'upload', spec: {} } });
    const b = await store.beginBuild('/docs/w', '', null);
    // More than one page of snippet rows (pages of 1000).
    await store.addSnippets(b, snippets(2500));
    await store.finalizeBuild(b);
    assert.deepEqual(
      logs.filter((l) => /worker thread/.test(l.message)),
      [],
      'no fallback to the main thread',
    );
    assert.deepEqual(store.segmentBuilds, { workerThread: 1, mainThread: 0 }, 'built in a worker thread');
    const served = await store.getSnippets('/docs/w', '');
    assert.equal(served.length, 2500);
    assert.deepEqual(served.map((s) => s.seq), served.map((_, i) => i), 'every page read, in order');
    const expected = encodeSegment(computeIndexData(served, DEFAULT_BM25), served, DEFAULT_BM25);
    const file = readFileSync(join(data.dir, SEGMENT_DIR, `${b}.seg`));
    assert.ok(Buffer.concat(expected.chunks).equals(file), 'the same bytes as a main-thread encode');
    const hits = await store.search('/docs/w', '', 'frobnicator level 3', 5);
    assert.ok(hits.length > 0);
  } finally {
    await store.close();
    await data.remove();
  }
});

test('a writer process (refdesk add) computes a small build on its main thread (up to WRITER_MAIN_THREAD_SNIPPETS), the same bytes', async () => {
  const data = await tempDataDir();
  const store = makeStore(data.dir, 'writer');
  await store.open();
  try {
    await store.upsertLibrary({ id: '/docs/m', title: 'm', source: { kind: 'upload', spec: {} } });
    const b = await store.beginBuild('/docs/m', '', null);
    // More than a server computes on its main thread (segment-build.ts, MAIN_THREAD_SNIPPETS: 300).
    assert.ok(WRITER_MAIN_THREAD_SNIPPETS >= 400);
    await store.addSnippets(b, snippets(400));
    await store.finalizeBuild(b);
    assert.deepEqual(store.segmentBuilds, { workerThread: 0, mainThread: 1 }, 'no worker thread started');
    const served = await store.getSnippets('/docs/m', '');
    const expected = encodeSegment(computeIndexData(served, DEFAULT_BM25), served, DEFAULT_BM25);
    assert.ok(Buffer.concat(expected.chunks).equals(readFileSync(join(data.dir, SEGMENT_DIR, `${b}.seg`))), 'the bytes a worker thread writes');
  } finally {
    await store.close();
    await data.remove();
  }
});

test('a worker task that fails rejects with its error; the process stays up', async () => {
  const url = workerUrl(new URL('../../../plugins/store-embedded/embedded-store.ts', import.meta.url).href, './segment-build-thread');
  const data = await tempDataDir();
  try {
    mkdirSync(data.dir, { recursive: true });
    const source = join(data.dir, 'x.staging');
    writeFileSync(source, '{not json\n');
    await assert.rejects(runWorkerTask(url, { dir: '/nonexistent', buildId: 'x', source, params: DEFAULT_BM25 }), /JSON/);
  } finally {
    await data.remove();
  }
});
