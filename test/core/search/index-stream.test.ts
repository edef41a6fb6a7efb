/**
 * The streamed index build (issue 17: builds in bounded memory): computeIndexDataStreamed gives
 * the same IndexData as computeIndexData, and writeSegmentStreamed / writeSegmentFromFile (from a
 * staging file or a pack) the same segment bytes as writeSegment, on generated snippet sets that
 * exercise every field and on a real corpus.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { StoredSnippet } from '../../../core/contracts.ts';
import { computeIndexData, computeIndexDataStreamed, type IndexData } from '../../../core/search/index-data.ts';
import { DEFAULT_BM25, type Bm25Params } from '../../../core/search/lexical-index.ts';
import { pageWordsText } from '../../../core/search/page-words.ts';
import { MarkdownChunker } from '../../../plugins/chunker-markdown/markdown-chunker.ts';
import { StagingFile, writePack } from '../../../plugins/store-embedded/build-pack.ts';
import { writeSegmentFromFile } from '../../../plugins/store-embedded/segment-build.ts';
import { encodeSegment, writeSegmentStreamed } from '../../../plugins/store-embedded/segment.ts';
import { prng as rng } from '../../../scripts/fuzz/requests.ts';
import { CORPORA_DIR, hasCorpora } from '../../helpers/corpora.ts';

/**
 * Generated documentation: pages of nested sections (parents), info and code snippets, front
 * matter words and summaries, links (relative, site paths, anchors, a list of links, images,
 * external ones), identifiers written as one word whose halves are prose words (split words),
 * non-ASCII words, sections split over several snippets and a file met again later.
 */
function generated(seed: number, pages: number): StoredSnippet[] {
  const random = rng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
  const prose = ['url', 'retrieve', 'read', 'line', 'file', 'name', 'stream', 'open', 'close', 'server', 'request', 'handler', 'route', 'données', 'κλειδί', 'cache', 'token', 'get', 'use', 'state'];
  const joined = ['urlretrieve', 'readline', 'readlines', 'filename', 'openstream', 'requesthandler', 'useState', 'getRoute'];
  // Prose never writes the joined identifiers: they are split into its words (headings, code).
  const sentence = (n: number) => Array.from({ length: n }, () => pick(prose)).join(' ');
  const out: StoredSnippet[] = [];
  const paths = Array.from({ length: pages }, (_, p) => `guide/${pick(['a', 'b'])}/page-${p}.md`);
  const push = (s: Partial<StoredSnippet> & Pick<StoredSnippet, 'type' | 'sourcePath' | 'breadcrumb'>) =>
    out.push({ title: '', description: '', language: '', code: '', content: '', pageTitle: s.breadcrumb[0] ?? '', lineStart: 1, lineEnd: 2, tokens: 5 + Math.floor(random() * 300), ...s, id: out.length + 1, seq: out.length });
  const order = [...paths.keys(), ...(pages > 2 ? [0] : [])]; // page 0 again at the end (a file met twice)
  for (const p of order) {
    const path = paths[p];
    const title = `Page ${p} ${pick(prose)}`;
    const sections = 1 + Math.floor(random() * 5);
    for (let k = 0; k < sections; k++) {
      const depth = 1 + Math.floor(random() * 3);
      const breadcrumb = [title, ...Array.from({ length: depth - 1 }, (_, d) => `${pick(prose)} ${d} ${k > 2 ? '' : pick(joined)}`.trim())];
      const anchor = random() < 0.5 ? breadcrumb[breadcrumb.length - 1].toLowerCase().replace(/\s+/g, '-') : undefined;
      const front = k === 0 && random() < 0.6 ? pageWordsText([pick(prose), pick(joined), 'frontword'], random() < 0.5 ? `A summary about ${sentence(4)}` : undefined) : '';
      const link = () =>
        pick([
          `[${pick(prose)}](./page-${Math.floor(random() * pages)}.md)`,
          `[x](../${pick(['a', 'b'])}/page-${Math.floor(random() * pages)}.md#${pick(prose)}-0-${pick(joined).toLowerCase()})`,
          `[site](/guide/a/page-${Math.floor(random() * pages)}/)`,
          `![img](./pic.png)`,
          `[ext](https://example.com/${pick(prose)})`,
          `[self](#${pick(prose)})`,
          `[weird](<<odd> "t")`,
        ]);
      const parts = 1 + Math.floor(random() * 3);
      for (let i = 0; i < parts; i++) {
        if (random() < 0.35) {
          push({ type: 'code', sourcePath: path, breadcrumb, anchor, title: `${pick(prose)} ${pick(joined)}`, description: random() < 0.5 ? sentence(6) : '', language: 'ts', code: `const ${pick(joined)} = ${pick(joined)}(${pick(prose)}_${pick(prose)});` });
        } else {
          const listOfLinks = random() < 0.1;
          const content = listOfLinks ? Array.from({ length: 4 }, link).join('\n') : `${sentence(8 + Math.floor(random() * 30))} ${random() < 0.5 ? link() : ''} ${sentence(5)}`;
          push({ type: 'info', sourcePath: path, breadcrumb, anchor, content, description: i === 0 ? front : '' });
        }
      }
    }
  }
  return out;
}

const variants: Array<[string, Bm25Params]> = [
  ['default', DEFAULT_BM25],
  ['no split, no pages, no parents', { ...DEFAULT_BM25, splitWords: false, pageFusion: 0, parentWeight: 0 }],
  ['no links, no priors, no meta', { ...DEFAULT_BM25, linkWeight: 0, inlinkPrior: 0, codePrior: 0, prefixWeight: 0, fields: { ...DEFAULT_BM25.fields, meta: { ...DEFAULT_BM25.fields.meta, weight: 0 } } }],
  ['links only as a prior', { ...DEFAULT_BM25, linkWeight: 0 }],
];

function assertSameIndex(got: IndexData, want: IndexData, label: string): void {
  for (const key of Object.keys(want) as Array<keyof IndexData>) assert.deepEqual(got[key], want[key], `${label}: ${key}`);
}

test('computeIndexDataStreamed gives computeIndexData to the bit on generated snippets exercising every field', () => {
  let parents = 0;
  let links = 0;
  let halves = 0;
  let meta = 0;
  for (let seed = 1; seed <= 4; seed++) {
    const snippets = generated(seed, 3 + seed * 3);
    for (const [name, params] of variants) {
      const want = computeIndexData(snippets, params);
      const got = computeIndexDataStreamed((visit) => snippets.forEach(visit), params);
      assertSameIndex(got, want, `seed ${seed}, ${name}`);
      if (name === 'default') {
        parents += want.parFirst.length;
        links += want.links.items.length;
        // Split words: the halves beside the whole words make the headings and code longer.
        const unsplit = computeIndexData(snippets, { ...params, splitWords: false });
        halves += want.code.items.length - unsplit.code.items.length + want.head.items.length - unsplit.head.items.length;
        meta += want.terms.includes('frontword') ? 1 : 0;
      }
    }
  }
  // The sets do exercise what they are meant to.
  assert.ok(parents > 0 && links > 0 && halves > 0 && meta > 0, `parents ${parents}, links ${links}, halves ${halves}, front-matter words ${meta}`);
  // An empty build and a one-snippet build.
  assertSameIndex(computeIndexDataStreamed(() => {}, DEFAULT_BM25), computeIndexData([], DEFAULT_BM25), 'empty');
  const one = generated(9, 1).slice(0, 1);
  assertSameIndex(computeIndexDataStreamed((visit) => one.forEach(visit), DEFAULT_BM25), computeIndexData(one, DEFAULT_BM25), 'one snippet');
});

/** The bytes writeSegment writes for these snippets (computeIndexData, encodeSegment). */
const expectedBytes = (snippets: StoredSnippet[], params = DEFAULT_BM25) => Buffer.concat(encodeSegment(computeIndexData(snippets, params), snippets, params).chunks);

test('a segment written streamed, from the snippets or from a staging file or a pack, is byte for byte the one writeSegment writes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-index-stream-'));
  try {
    const snippets = generated(3, 14);
    const want = expectedBytes(snippets);
    const data = computeIndexDataStreamed((visit) => snippets.forEach(visit), DEFAULT_BM25);
    const streamed = await writeSegmentStreamed(join(dir, 'a'), 'b1', data, (visit) => snippets.forEach(visit), DEFAULT_BM25);
    assert.ok(readFileSync(join(dir, 'a', streamed.file)).equals(want));
    assert.equal(streamed.size, want.length);
    assert.equal(streamed.checksum, encodeSegment(computeIndexData(snippets, DEFAULT_BM25), snippets, DEFAULT_BM25).checksum);
    assert.deepEqual(readdirSync(join(dir, 'a')), [streamed.file]); // no temporary file left

    const staging = new StagingFile(join(dir, 'b1.staging'));
    staging.append(snippets.slice(0, 10));
    staging.append(snippets.slice(10));
    staging.close();
    const fromStaging = await writeSegmentFromFile(join(dir, 'b'), 'b1', staging.path, DEFAULT_BM25);
    assert.ok(readFileSync(join(dir, 'b', fromStaging.file)).equals(want));
    const pack = await writePack(dir, 'b1', [snippets.slice(0, 7), snippets.slice(7)]);
    const fromPack = await writeSegmentFromFile(join(dir, 'c'), 'b1', join(dir, pack.file), DEFAULT_BM25);
    assert.ok(readFileSync(join(dir, 'c', fromPack.file)).equals(want));

    // Records that are not the index's snippets are refused; no file is left.
    await assert.rejects(writeSegmentStreamed(join(dir, 'd'), 'b1', data, (visit) => snippets.slice(1).forEach(visit), DEFAULT_BM25), /not the index's/);
    await assert.rejects(writeSegmentStreamed(join(dir, 'd'), 'b1', data, (visit) => snippets.slice(0, -1).forEach(visit), DEFAULT_BM25), /snippets, the index has/);
    assert.deepEqual(readdirSync(join(dir, 'd')), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('on a real corpus (koa, as an upload ingest chunks it), the streamed build gives the same index and segment bytes', { skip: !hasCorpora && 'needs ../shared/corpora' }, async () => {
  const chunker = new MarkdownChunker({ maxInfoTokens: 400, maxDescriptionChars: 600 });
  const root = join(CORPORA_DIR, 'koa');
  const snippets: StoredSnippet[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d).sort()) {
      const p = join(d, entry);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.mdx?$/.test(entry)) for (const s of chunker.chunk({ path: relative(root, p), format: 'markdown', content: readFileSync(p, 'utf8') })) snippets.push({ ...s, id: snippets.length + 1, seq: snippets.length });
    }
  };
  walk(root);
  assertSameIndex(computeIndexDataStreamed((visit) => snippets.forEach(visit), DEFAULT_BM25), computeIndexData(snippets, DEFAULT_BM25), 'koa');
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-index-stream-'));
  try {
    const staging = new StagingFile(join(dir, 'koa.staging'));
    staging.append(snippets);
    staging.close();
    const written = await writeSegmentFromFile(dir, 'koa', staging.path, DEFAULT_BM25);
    assert.ok(readFileSync(join(dir, written.file)).equals(expectedBytes(snippets)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
