import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredSnippet } from '../../../core/contracts.ts';
import { computeIndexData } from '../../../core/search/index-data.ts';
import { DEFAULT_BM25, openLexicalIndex } from '../../../core/search/lexical-index.ts';
import { HEADER_BYTES, SegmentError, assembleFromSegment, memorySegment, openSegment, searchServedSegment, writeSegment } from '../../../plugins/store-embedded/segment.ts';
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

/*
 * Format 3: a long list (more than a block's postings, POSTINGS_BLOCK) is read by block when
 * MaxScore scores candidates only (a library of 100,000+ sections; here koa with the threshold
 * lowered, written with blocks of BLOCK postings so that it has many long lists): only the blocks
 * it lands in, each checked against its crc32 in the list's skip table.
 */
const BLOCK = 8;
const koaSegment = async (dir: string) => {
  const snippets = chunkedCorpus('koa').map((s, i) => ({ ...s, id: i + 1, libraryId: '/koajs/koa', version: '', buildId: 'b' }) as unknown as StoredSnippet);
  const data = computeIndexData(snippets, DEFAULT_BM25);
  const written = await writeSegment(dir, 'koa', data, snippets, DEFAULT_BM25, BLOCK);
  return { snippets, data, written, file: join(dir, written.file) };
};

/** The file's description of its arrays (the index part's JSON). */
function describe(bytes: Buffer) {
  const metaLength = bytes.readUInt32LE(HEADER_BYTES);
  return JSON.parse(bytes.toString('utf8', HEADER_BYTES + 4, HEADER_BYTES + 4 + metaLength)) as {
    terms: string[];
    arrays: Array<{ name: string; offset: number; length: number }>;
    paged: Array<{ name: string; offset: number; length: number }>;
  };
}

test('koa with candidates read by block answers as the whole index in memory with the same candidates (search and context)', { skip: !hasSharedQuestions && 'needs ../shared/corpora and ../shared/bench' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-seg-blocks-'));
  try {
    const { snippets, data, written, file } = await koaSegment(dir);
    const longLists = [data.bm25, data.parentBm25, data.pageBm25].reduce((n, b) => n + b.start.slice(1).filter((e, t) => e - b.start[t] > BLOCK).length, 0);
    assert.ok(longLists >= 100, `${longLists} lists longer than a block`);
    const questions = sharedQuestions('koa');
    for (const limits of [
      { minSections: 0, sections: 40, parents: 20, pages: 10 },
      { minSections: 0, sections: 200, parents: 100, pages: 50 },
    ]) {
      const paged = openSegment(file, 'koa', DEFAULT_BM25, written.checksum, false, { candidates: limits, readWholeMax: 0 });
      const whole = openLexicalIndex(data, DEFAULT_BM25, undefined, limits);
      const wholeSegment = { ...memorySegment('koa', data, snippets, DEFAULT_BM25), index: whole };
      try {
        for (const q of questions) {
          for (const limit of [7, 60]) assert.deepEqual(paged.index.search(q, limit), whole.search(q, limit), `${q} (${limit})`);
          assert.equal(paged.index.lastSearch!().candidates, true);
          assert.deepEqual(assembleFromSegment(paged, q, 200, 4000), assembleFromSegment(wholeSegment, q, 200, 4000));
        }
      } finally {
        paged.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a damaged block of a long list is found by the query that reads it (SegmentError, corrupt: the store rebuilds the segment); the file written again answers as before', { skip: !hasSharedQuestions && 'needs ../shared/corpora and ../shared/bench' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-seg-blocks-'));
  try {
    const { snippets, data, written, file } = await koaSegment(dir);
    const limits = { minSections: 0, sections: 40, parents: 20, pages: 10 };
    const question = 'how do I write middleware';
    const good = openSegment(file, 'koa', DEFAULT_BM25, written.checksum, false, { candidates: limits, readWholeMax: 0 });
    const want = good.index.search(question, 20);
    good.close();
    // The longest section list among the question's words: damage a weight in its last block.
    const bytes = readFileSync(file);
    const meta = describe(bytes);
    const len = (t: number) => data.bm25.start[t + 1] - data.bm25.start[t];
    const term = ['middlewar', 'middleware', 'write', 'use', 'app']
      .map((w) => meta.terms.indexOf(w))
      .filter((t) => t >= 0)
      .sort((a, b) => len(b) - len(a))[0];
    assert.ok(len(term) > 2 * BLOCK, `term ${meta.terms[term]} has ${len(term)} postings`);
    const postingsBase = HEADER_BYTES + bytes.readDoubleLE(16) + bytes.readDoubleLE(24);
    const tfw = meta.paged.find((a) => a.name === 'bm25.tfw')!;
    const lastBlock = Math.floor((len(term) - 1) / BLOCK);
    const at = data.bm25.start[term] + lastBlock * BLOCK;
    const damaged = Buffer.from(bytes);
    damaged[postingsBase + tfw.offset + 8 * at + 7] ^= 0x01;
    writeFileSync(file, damaged);
    const paged = openSegment(file, 'koa', DEFAULT_BM25, written.checksum, false, { candidates: limits, readWholeMax: 0 });
    try {
      // A question with a rare word only does not read the damaged list.
      assert.doesNotThrow(() => paged.index.search('koa-compose', 10));
      assert.throws(
        () => paged.index.search(`${question} ${meta.terms[term]}`, 20),
        (err: Error) => err instanceof SegmentError && err.reason === 'corrupt' && new RegExp(`block ${lastBlock} of the postings of term ${term} \\(bm25\\) is damaged`).test(err.message),
      );
    } finally {
      paged.close();
    }
    // Rebuilt (as the store does from the build's pack): the same bytes, the same answers.
    const again = await writeSegment(dir, 'koa', data, snippets, DEFAULT_BM25, BLOCK);
    assert.deepEqual(readFileSync(file), bytes);
    const fresh = openSegment(join(dir, again.file), 'koa', DEFAULT_BM25, again.checksum, false, { candidates: limits, readWholeMax: 0 });
    try {
      assert.deepEqual(fresh.index.search(question, 20), want);
    } finally {
      fresh.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
