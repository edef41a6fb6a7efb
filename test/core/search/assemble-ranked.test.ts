/**
 * Context answers from a segment read only the snippet records the answer can use
 * (assembleRanked / assembleFromSegment): the answers equal assembling every candidate, over a
 * real corpus ingested through the real pipeline, with far fewer records read.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKernel, type Kernel } from '../../../core/kernel.ts';
import { createConsoleLogger } from '../../../core/services.ts';
import { addLibrary, runIngestJob } from '../../../core/ingest.ts';
import { assembleContext, assembleRanked } from '../../../core/context-assembly.ts';
import { DEFAULT_BM25 } from '../../../core/search/lexical-index.ts';
import { sectionKey } from '../../../core/search/sections.ts';
import { assembleFromSegment, openSegment, type ServedSegment } from '../../../plugins/store-embedded/segment.ts';
import { CORPORA_DIR, hasCorpora } from '../../helpers/corpora.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe('answers assembled from the reachable candidates only', { skip: hasCorpora ? false : 'shared corpora not present' }, () => {
  let dir: string;
  let kernel: Kernel;
  let segment: ServedSegment;
  let questions: string[];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'refdesk-ranked-'));
    kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), { env: { dataDir: dir, mode: 'server', port: 0 }, logger: createConsoleLogger('error', () => {}) });
    await kernel.open();
    const { job } = await addLibrary(kernel, { source: 'upload', name: 'fastify', spec: { path: join(CORPORA_DIR, 'fastify') } });
    assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
    const ref = await kernel.store.segmentFile!('/docs/fastify', '');
    assert.ok(ref);
    segment = openSegment(ref.path, ref.buildId, DEFAULT_BM25, ref.checksum);
    const snippets = await kernel.store.getSnippets('/docs/fastify', '');
    // Questions from the library's own headings, with words of their prose, and a few plain ones.
    questions = ['how do I register a plugin', 'validation schema for the body', 'hooks onRequest', 'logger redact', 'decorate request', 'xyzzy nothing'];
    for (let i = 0; i < snippets.length; i += Math.ceil(snippets.length / 60)) {
      const s = snippets[i];
      questions.push(`${s.breadcrumb.at(-1) ?? s.pageTitle} ${s.content.split(/\s+/).slice(3, 6).join(' ')}`.slice(0, 200));
    }
  });

  after(async () => {
    segment?.close();
    await kernel?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the index names each candidate section key as the snippet would', () => {
    const results = segment.index.search('reply send headers', 200);
    assert.ok(results.length > 10);
    for (const r of results) assert.equal(segment.index.sectionKeyOf(r.id), sectionKey(segment.snippet(r.id)!));
    assert.equal(segment.index.sectionKeyOf(-5), undefined);
  });

  test('same answers as assembling every candidate, reading fewer records', () => {
    let readAll = 0;
    let readPruned = 0;
    const counting = (): ServedSegment => ({
      ...segment,
      index: segment.index,
      snippets: (ids: readonly number[]) => {
        readPruned += ids.length;
        return segment.snippets(ids);
      },
    });
    for (const q of questions) {
      const results = segment.index.search(q, 200);
      readAll += results.length;
      const hits = results.map((r) => ({ snippet: segment.snippet(r.id)!, score: r.score, ...(r.unit ? { unit: r.unit } : {}) }));
      for (const budget of [500, 5000, 20000]) {
        const want = assembleContext(hits, q, budget);
        const got = budget === 5000 ? assembleFromSegment(counting(), q, 200, budget) : assembleFromSegment(segment, q, 200, budget);
        assert.deepEqual(got, want, `${q} (budget ${budget})`);
      }
    }
    assert.ok(readPruned < readAll / 2, `records read: ${readPruned} of ${readAll}`);
  });

  test('a record that cannot be read leaves the answer as a search without it would give', () => {
    const q = 'register a plugin with options';
    const results = segment.index.search(q, 200);
    const drop = results[0].id;
    const read = (ids: readonly number[]) => ids.map((id) => (id === drop ? undefined : segment.snippet(id)));
    const ranked = results.map((r) => ({ id: r.id, score: r.score, key: r.unit?.key ?? segment.index.sectionKeyOf(r.id)!, ...(r.unit ? { unit: r.unit } : {}) }));
    const hits = results.filter((r) => r.id !== drop).map((r) => ({ snippet: segment.snippet(r.id)!, score: r.score, ...(r.unit ? { unit: r.unit } : {}) }));
    assert.deepEqual(assembleRanked(ranked, read, q, 5000), assembleContext(hits, q, 5000));
  });
});
