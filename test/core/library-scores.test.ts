import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Kernel } from '../../core/kernel.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { hitsCoverage, searchLibraries } from '../../core/library-search.ts';
import type { SearchHit, StoredSnippet } from '../../core/contracts.ts';
import { tokenize } from '../../core/search/tokenize.ts';
import { markdownMeta } from '../../core/readme-meta.ts';
import { selfRetrievalScore } from '../../core/self-retrieval.ts';
import type { ContextSearcher } from '../../core/query.ts';
import { trustParts, trustScore, type TrustInputs } from '../../core/trust-score.ts';
import { MemoryStore } from '../../core/testing/memory-store.ts';
import { CORPORA_DIR, hasCorpora } from '../helpers/corpora.ts';
import { BASE_PLUGINS, openTestKernel, type TestKernel } from '../helpers/test-kernel.ts';

const NOW = new Date('2026-06-01T00:00:00Z');
const base: TrustInputs = { localFiles: false, now: NOW, documents: 40, skippedDocuments: 0, snippets: 300 };

describe('trustScore: an integer 0-10 from provenance, stars, freshness and completeness', () => {
  test('every input moves it the documented way', () => {
    assert.equal(trustScore(base), 5, 'repository 2 + no stars 0 + unknown age 1 + complete 2');
    assert.equal(trustScore({ ...base, localFiles: true }), 4);
    assert.equal(trustScore({ ...base, official: true }), 6);
    assert.equal(trustScore({ ...base, stars: 100_000, official: true, updatedAt: '2026-05-01T00:00:00Z' }), 10);
    assert.equal(trustScore({ ...base, updatedAt: '2020-01-01T00:00:00Z' }), 4, 'over two years old');
    assert.equal(trustParts({ ...base, stars: 1000 }).popularity.toFixed(2), '1.80');
    assert.equal(trustParts({ ...base, updatedAt: '2025-12-30T00:00:00Z' }).freshness, 2);
    assert.equal(trustParts({ ...base, updatedAt: '2025-01-01T00:00:00Z' }).freshness, 1);
    assert.equal(trustParts({ ...base, documents: 20, skippedDocuments: 20 }).completeness, 1, 'half the documents skipped halves completeness');
    assert.ok(trustParts({ ...base, snippets: 9 }).completeness < 2, 'a tiny build is not complete');
  });

  test('degenerate inputs stay in range', () => {
    for (const odd of [
      { ...base, documents: 0, snippets: 0 },
      { ...base, stars: Number.NaN, updatedAt: 'not a date' },
      { ...base, stars: -5, documents: -1, skippedDocuments: Number.POSITIVE_INFINITY },
      { ...base, stars: 1e12, official: true, updatedAt: '2099-01-01T00:00:00Z' },
    ]) {
      const s = trustScore(odd);
      assert.ok(Number.isInteger(s) && s >= 0 && s <= 10, `${JSON.stringify(odd)} -> ${s}`);
    }
    assert.equal(trustParts({ ...base, documents: 0, snippets: 0 }).completeness, 0);
  });
});

describe("library search: the documentation coverage, read field by field", () => {
  test("the same share as the hits' text joined, the re-ranking's former reading: stemmed, compound, cased, missing and absent words", () => {
    const snippet = (s: Partial<StoredSnippet>): SearchHit => ({ score: 1, snippet: { id: 1, seq: 0, breadcrumb: [], title: '', content: '', code: '', description: '', ...s } as StoredSnippet });
    const hits = [
      snippet({ breadcrumb: ['Guide', 'Routing'], title: 'Route LIBRARIES', content: 'Mount routers; the app.use() chain runs middleware.', description: 'Study', code: 'const [n, setN] = React.useState(0);\nctx.throw(404);' }),
      snippet({ title: 'Cookies', content: 'Signed cookies need keys, e.g. 1.2.3 and --max-old-space-size.', description: undefined as unknown as string }),
      snippet({ breadcrumb: ['Ünïcode Straße'], content: 'İstanbul flies; return_exceptions=True', code: 'ns::Type::method -> value #anchor' }),
    ];
    const joined = (q: string, h: SearchHit[]) => {
      const words = new Set(tokenize(q));
      const have = new Set(tokenize(h.map((x) => `${x.snippet.breadcrumb.join(' ')} ${x.snippet.title} ${x.snippet.content} ${x.snippet.code} ${x.snippet.description}`).join(' ')));
      return words.size === 0 ? 0 : [...words].filter((w) => have.has(w)).length / words.size;
    };
    const questions = [
      'library routes', 'how do I route a library', 'usestate hook', 'react usestate', 'ctx throw', 'signed cookie keys', 'max old space size', '1.2.3',
      'undefined description', 'istanbul fly', 'return exceptions', 'return_exceptions', 'ns::type::method', 'anchor value', 'strasse unicode', 'routing middleware chain',
      'nothing here at all', 'studies', 'the and of', '', 'ROUTERS Mounting', 'setn n', 'app.use',
    ];
    let partial = 0;
    for (const q of questions) {
      for (const h of [hits, hits.slice(1), hits.slice(0, 1), []]) {
        const want = joined(q, h);
        assert.equal(hitsCoverage(new Set(tokenize(q)), h), want, `${JSON.stringify(q)} over ${h.length} hits`);
        if (want > 0 && want < 1) partial++;
      }
    }
    assert.ok(partial > 3, 'some questions are covered in part');
  });
});

describe("markdownMeta: a README's H1 and first paragraph", () => {
  test('badges, images, HTML and link targets are dropped; front matter and code are skipped', () => {
    assert.deepEqual(markdownMeta('---\ntitle: x\n---\n<div align="center"><img src="a.png"></div>\n\n# [Zod](https://zod.dev)\n\n[![npm](b.svg)](c)\n\n```sh\nnpm i zod\n```\n\nTypeScript-first schema **validation**.\n'), {
      title: 'Zod',
      description: 'TypeScript-first schema validation.',
    });
    assert.deepEqual(markdownMeta('Hono\n====\n\nUltrafast web framework.\n'), { title: 'Hono', description: 'Ultrafast web framework.' });
    assert.deepEqual(markdownMeta(''), {});
    assert.equal(markdownMeta(`# T\n\n${'word '.repeat(200)}`).description!.length <= 300, true);
  });
});

describe('library metadata and scores through the kernel (upload source, embedded store)', () => {
  let dir: string;
  let tk: TestKernel;
  let kernel: Kernel;

  before(async () => {
    tk = await openTestKernel({ prefix: 'refdesk-scores-', plugins: [...BASE_PLUGINS, 'plugins/source-upload'] });
    ({ dir, kernel } = tk);
  });
  after(() => tk?.close());

  const folder = (name: string, files: Record<string, string>) => {
    const path = join(dir, name);
    mkdirSync(path, { recursive: true });
    for (const [p, body] of Object.entries(files)) writeFileSync(join(path, p), body);
    return path;
  };
  const ingest = async (name: string, path: string, title?: string) => {
    const { job } = await addLibrary(kernel, { source: 'upload', name, spec: { path }, ...(title ? { title } : {}) });
    const done = await runIngestJob(kernel, job.id);
    return { done, library: (await kernel.store.getLibrary(`/docs/${name}`))! };
  };

  test('a real corpus (koa): benchmark score > 0 and <= 100, the same on every run, and serving is unchanged by it', { skip: hasCorpora ? false : 'shared corpora not present' }, async () => {
    const { done, library } = await ingest('koa', join(CORPORA_DIR, 'koa'));
    assert.equal(done.state, 'succeeded');
    assert.ok(library.benchmarkScore > 0 && library.benchmarkScore <= 100, `benchmark ${library.benchmarkScore}`);
    assert.ok(Number.isInteger(library.trustScore) && library.trustScore > 0 && library.trustScore <= 10, `trust ${library.trustScore}`);
    const before = await kernel.store.getSnippets('/docs/koa', '');
    const again = await selfRetrievalScore(kernel.store, '/docs/koa', '');
    assert.equal(again.score, library.benchmarkScore, 'the sample is deterministic');
    assert.ok(again.asked > 0 && again.asked <= 100 && again.found <= again.asked);
    assert.deepEqual(await kernel.store.getSnippets('/docs/koa', ''), before);
    // The check lists the sections from the snippets' heads, never reading their text (getSnippets).
    const calls = new Map<string, number>();
    const counting = new Proxy(kernel.store, {
      get(target, name, receiver) {
        const v = Reflect.get(target, name, receiver) as unknown;
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          calls.set(String(name), (calls.get(String(name)) ?? 0) + 1);
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    // (20 questions: what is counted does not depend on the sample's size.)
    const twenty = await selfRetrievalScore(kernel.store, '/docs/koa', '', { sample: 20 });
    assert.deepEqual(await selfRetrievalScore(counting, '/docs/koa', '', { sample: 20 }), twenty);
    assert.equal(calls.get('getSnippets'), undefined, 'no snippet text read');
    assert.equal(calls.get('getSnippetHeads'), 1);
    assert.equal(calls.get('search'), 20);
    // A store written for an earlier kernel has no getSnippetHeads (optional): its snippets serve.
    const older = new Proxy(kernel.store, {
      get: (target, name, receiver) => (name === 'getSnippetHeads' ? undefined : (Reflect.get(target, name, receiver) as unknown)),
      has: (target, name) => name !== 'getSnippetHeads' && Reflect.has(target, name),
    });
    assert.deepEqual(await selfRetrievalScore(older, '/docs/koa', '', { sample: 20 }), twenty);
    // With a searcher (a server's search pool) the questions go to it; one that cannot serve the version (null) or fails leaves them to the store.
    let asked = 0;
    const searcher: ContextSearcher = {
      async search(libraryId, version, query, limit, assemble) {
        asked++;
        assert.equal(assemble, null, 'hits, not an assembled answer');
        return { hits: await kernel.store.search(libraryId, version, query, limit) };
      },
    };
    calls.clear();
    assert.deepEqual(await selfRetrievalScore(counting, '/docs/koa', '', { sample: 20, searcher }), twenty);
    assert.equal(asked, 20);
    assert.equal(calls.get('search'), undefined, 'the store searched nothing');
    for (const broken of [async () => null, async () => Promise.reject(new Error('worker died'))]) {
      calls.clear();
      assert.deepEqual(await selfRetrievalScore(counting, '/docs/koa', '', { sample: 20, searcher: { search: broken } }), twenty);
      assert.equal(calls.get('search'), 20);
    }
    // The event loop gets turns while the check runs (a server keeps answering meanwhile).
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    try {
      await selfRetrievalScore(kernel.store, '/docs/koa', '', { sample: 20 });
    } finally {
      clearInterval(timer);
    }
    assert.ok(turns > 0, 'timers ran during the check');
    const top1 = await selfRetrievalScore(kernel.store, '/docs/koa', '', { topK: 1, sample: 20 });
    assert.equal(top1.asked, 20);
    assert.ok(top1.found <= 20);
  });

  test("the root README names the library; the user's title wins; search finds it by its real name", async () => {
    const path = folder('readme-lib', {
      'README.md': '# Nimbus Cloud Kit\n\nNimbus Cloud Kit provisions weather balloons.\n',
      'guide.md': '# Guide\n\n## Launch a balloon\n\nCall `launch()`.\n',
    });
    let { library } = await ingest('nck', path);
    assert.equal(library.title, 'Nimbus Cloud Kit');
    assert.equal(library.description, 'Nimbus Cloud Kit provisions weather balloons.');
    assert.equal(library.branch, '');
    const found = await searchLibraries(kernel, 'Nimbus Cloud Kit', 'launch a balloon');
    assert.equal(found[0]?.library.id, '/docs/nck');

    ({ library } = await ingest('nck', path, 'Balloons (ours)'));
    assert.equal(library.title, 'Balloons (ours)');
    // A later refresh without a title keeps the user's.
    ({ library } = await ingest('nck', path));
    assert.equal(library.title, 'Balloons (ours)');
  });

  test('an exact ID match still ranks before a library whose title is the name', async () => {
    const small = folder('storm', { 'README.md': '# Storm\n\nStorm tools.\n' });
    const big = folder('weather', {
      'README.md': '# Cirrus\n\nCirrus forecasts weather.\n',
      ...Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`page${i}.md`, `# Page ${i}\n\n## Topic ${i}\n\nForecast detail ${i}.\n\n\`\`\`js\nforecast(${i})\n\`\`\`\n`])),
    });
    assert.equal((await ingest('cirrus', small)).library.title, 'Storm');
    assert.equal((await ingest('weather', big)).library.title, 'Cirrus');
    const found = await searchLibraries(kernel, 'cirrus', '', { fast: true });
    assert.deepEqual(found.slice(0, 2).map((f) => f.library.id), ['/docs/cirrus', '/docs/weather']);
  });

  test('a build with nothing to ask (no headings with words) scores 0; a failed build leaves the scores as they were', async () => {
    const { library } = await ingest('plain', folder('plain', { 'notes.txt': 'just a line of text without any heading at all\n' }));
    const r = await selfRetrievalScore(kernel.store, '/docs/plain', '');
    assert.ok(r.score >= 0 && r.score <= 100);
    assert.equal(library.benchmarkScore, r.score);

    const before = (await kernel.store.getLibrary('/docs/nck'))!;
    const empty = folder('empty-now', { 'README.md': '' });
    const { done, library: after } = await ingest('nck', empty);
    assert.equal(done.state, 'failed');
    assert.equal(after.benchmarkScore, before.benchmarkScore);
    assert.equal(after.trustScore, before.trustScore);
    assert.equal(after.title, before.title);
  });
});

describe('selfRetrievalScore on an empty build', () => {
  test('no sections: 0 asked, score 0', async () => {
    const store = new MemoryStore();
    await store.open();
    await store.upsertLibrary({ id: '/docs/empty', title: 'empty', source: { kind: 'upload', spec: {} } });
    const build = await store.beginBuild('/docs/empty', '', null);
    await store.finalizeBuild(build);
    assert.deepEqual(await selfRetrievalScore(store, '/docs/empty', ''), { score: 0, asked: 0, found: 0, sections: 0 });
  });
});
