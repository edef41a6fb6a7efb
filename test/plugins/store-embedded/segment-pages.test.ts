import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredSnippet } from '../../../core/contracts.ts';
import { computeIndexData } from '../../../core/search/index-data.ts';
import { DEFAULT_BM25 } from '../../../core/search/lexical-index.ts';
import { HEADER_BYTES, assembleFromSegment, memorySegment, openSegment, searchServedSegment, writeSegment } from '../../../plugins/store-embedded/segment.ts';
import { chunkedCorpus, hasSharedQuestions, sharedQuestions } from '../../helpers/corpora.ts';

/*
 * A segment read by pages (format 2: postings and per-section lists read by list when a query
 * needs them) answers as the same index held whole in memory, on a real corpus with the shared
 * benchmark's questions about it.
 */

test('koa read by pages answers every benchmark question as the whole index in memory does', { skip: !hasSharedQuestions && 'needs ../shared/corpora and ../shared/bench' }, async () => {
  const snippets = chunkedCorpus('koa').map((s, i) => ({ ...s, id: i + 1, libraryId: '/koajs/koa', version: '', buildId: 'b' }) as unknown as StoredSnippet);
  const data = computeIndexData(snippets, DEFAULT_BM25);
  const questions = sharedQuestions('koa');
  assert.ok(questions.length >= 10);
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-seg-pages-'));
  try {
    const written = await writeSegment(dir, 'koa', data, snippets, DEFAULT_BM25);
    const file = readFileSync(join(dir, written.file));
    const indexLength = file.readDoubleLE(16);
    const postingsLength = file.readDoubleLE(144);
    assert.ok(postingsLength > indexLength, `postings part ${postingsLength} bytes, index part ${indexLength}`);
    assert.equal(HEADER_BYTES + indexLength + file.readDoubleLE(24) + postingsLength, file.length);
    const paged = openSegment(join(dir, written.file), 'koa', DEFAULT_BM25, written.checksum);
    const whole = memorySegment('koa', data, snippets, DEFAULT_BM25);
    try {
      for (const q of questions) {
        for (const limit of [7, 60, 200]) {
          assert.deepEqual(paged.index.search(q, limit), whole.index.search(q, limit), `${q} (${limit})`);
          assert.deepEqual(searchServedSegment(paged, q, limit), searchServedSegment(whole, q, limit));
        }
        assert.deepEqual(assembleFromSegment(paged, q, 200, 4000), assembleFromSegment(whole, q, 200, 4000));
      }
      // Quoted text reads the sections' prose and code lists (phrases), a long answer their
      // snippets' own words and heading paths.
      const quoted = '"Cannot set headers after they are sent" when calling ctx.body';
      assert.deepEqual(assembleFromSegment(paged, quoted, 200, 8000), assembleFromSegment(whole, quoted, 200, 8000));
    } finally {
      paged.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
