import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { SearchHit, StoredSnippet } from '../../../core/contracts.ts';
import { assembleContext, DEFAULT_ASSEMBLY } from '../../../core/context-assembly.ts';
import { toContextJson, toContextText } from '../../../core/query.ts';
import { buildBm25f } from '../../../core/search/bm25f.ts';
import { buildLexicalIndex, DEFAULT_BM25 } from '../../../core/search/lexical-index.ts';
import { nearestByPrefix } from '../../../core/search/query-terms.ts';
import { groupSections } from '../../../core/search/sections.ts';
import { codeIdentifiers, splitIdentifier, stem, tokenize } from '../../../core/search/tokenize.ts';

let nextId = 1;
function snip(p: Partial<StoredSnippet> & { breadcrumb: string[] }): StoredSnippet {
  const id = nextId++;
  const type = p.type ?? (p.code ? 'code' : 'info');
  const text = (p.content ?? '') + (p.code ?? '') + (p.description ?? '');
  return {
    id,
    seq: id,
    type,
    title: p.title ?? p.breadcrumb[p.breadcrumb.length - 1],
    description: p.description ?? '',
    language: p.language ?? (type === 'code' ? 'js' : ''),
    code: p.code ?? '',
    content: p.content ?? '',
    breadcrumb: p.breadcrumb,
    pageTitle: p.pageTitle ?? p.breadcrumb[0],
    sourcePath: p.sourcePath ?? 'docs/a.md',
    lineStart: p.lineStart ?? 1,
    lineEnd: p.lineEnd ?? 2,
    tokens: p.tokens ?? Math.ceil(text.length / 4),
  };
}

describe('tokenizer', () => {
  test('code identifiers are kept whole and split into their words', () => {
    assert.deepEqual(splitIdentifier('parseAsync'), ['parse', 'async']);
    assert.deepEqual(splitIdentifier('HTTPServer'), ['http', 'server']);
    assert.deepEqual(tokenize('ctx.throw'), ['ctx.throw', 'ctx', 'throw']);
    assert.deepEqual(tokenize('useState'), ['usestate', stem('state')]); // "use" is a stop word
    assert.ok(tokenize('return_exceptions').includes('return_exceptions'));
    assert.ok(tokenize('return_exceptions').includes('exception'));
    assert.ok(tokenize('tokio::spawn').includes('spawn'));
  });

  test('stop words go, plurals and -ing/-ed forms meet their stem', () => {
    assert.deepEqual(tokenize('How do I set the routes'), ['set', stem('route')]);
    assert.equal(stem('routing'), stem('route'));
    assert.equal(stem('cookies'), stem('cookie'));
    assert.equal(stem('configured'), stem('configure'));
    assert.equal(stem('v2.1'), 'v2.1');
  });

  test('code identifiers skip keywords and one-letter names', () => {
    const ids = codeIdentifiers('const app = new Koa(); app.use(async (ctx, next) => { await next() })');
    assert.ok(ids.includes('koa') && ids.includes('app.use') && ids.includes('ctx'));
    assert.ok(!ids.includes('const') && !ids.includes('await') && !ids.includes('new'));
  });
});

describe('sections', () => {
  test('consecutive snippets of one file and heading path form one section', () => {
    const list = [
      snip({ breadcrumb: ['A'], sourcePath: 'a.md' }),
      snip({ breadcrumb: ['A', 'B'], sourcePath: 'a.md' }),
      snip({ breadcrumb: ['A', 'B'], sourcePath: 'a.md', code: 'x()' }),
      snip({ breadcrumb: ['A', 'B'], sourcePath: 'b.md' }),
      snip({ breadcrumb: ['A'], sourcePath: 'a.md' }),
    ];
    assert.deepEqual(groupSections(list), [[0], [1, 2], [3], [4]]);
  });
});

describe('BM25F scoring', () => {
  test('rarer terms weigh more; more occurrences score more but saturate; longer fields score less per occurrence', () => {
    const docs = [['alpha', 'beta'], ['alpha'], ['alpha', 'alpha', 'alpha', 'alpha'], ['alpha', 'x', 'y', 'z', 'w', 'v']];
    const idx = buildBm25f([docs], [{ weight: 1, b: 0.75 }], 1.2);
    assert.ok(idx.idf('beta') > idx.idf('alpha'));
    const score = (terms: string[]) => {
      const s = new Float64Array(docs.length);
      idx.accumulate(terms, s, []);
      return s;
    };
    const a = score(['alpha']);
    assert.ok(a[2] > a[1], 'more occurrences score more');
    assert.ok(a[2] < 4 * a[1], 'but saturate');
    assert.ok(a[1] > a[3], 'a longer field scores less for one occurrence');
    const w = new Float64Array(docs.length);
    idx.accumulate(['beta'], w, [], [2]);
    assert.ok(Math.abs(w[0] - 2 * score(['beta'])[0]) < 1e-12, 'term weights scale a term');
  });

  test('a heading match outranks the same words in prose', () => {
    const list = [
      snip({ breadcrumb: ['Guide', 'Install'], sourcePath: 'install.md', content: 'You can configure cookies with the cookie option for sessions in many ways.' }),
      snip({ breadcrumb: ['Guide', 'Cookies'], sourcePath: 'cookies.md', content: 'The option described here works for every request you make.' }),
    ];
    const idx = buildLexicalIndex(list);
    assert.equal(idx.search('cookies', 10)[0].id, list[1].id);
  });

  test('search returns every snippet of the best sections, sections best first, the better-matching snippet of a section first', () => {
    const list = [
      snip({ breadcrumb: ['Ctx', 'ctx.throw'], code: 'ctx.throw(400)', description: 'Throw an error' }),
      snip({ breadcrumb: ['Ctx', 'ctx.throw'], content: 'ctx.throw raises an HTTP error with a status.' }),
      snip({ breadcrumb: ['Ctx', 'ctx.state'], content: 'Namespace for passing information through middleware.' }),
      snip({ breadcrumb: ['Ctx', 'ctx.assert'], content: 'Like throw, but only when a value is falsy; an HTTP error follows.' }),
    ];
    const hits = buildLexicalIndex(list).search('how do I throw an HTTP error with ctx.throw', 10);
    assert.deepEqual(hits.slice(0, 2).map((h) => h.id), [list[1].id, list[0].id]); // the prose names throw, HTTP and error
    assert.equal(hits[0].score, hits[1].score);
    assert.ok(hits.findIndex((h) => h.id === list[3].id) > 1);
    assert.deepEqual(buildLexicalIndex(list).search('', 10), []);
    assert.deepEqual(buildLexicalIndex(list).search('the of and', 10), []);
  });

  test('an adjacent section of the same file is lifted by a strong match, one of another file is not', () => {
    const list = [
      snip({ breadcrumb: ['P', 'Pagination'], sourcePath: 'p.md', content: 'Pagination splits a list of pages into pagers.' }),
      snip({ breadcrumb: ['P', 'Examples'], sourcePath: 'p.md', content: 'Here we go.' }),
      snip({ breadcrumb: ['Q', 'Other'], sourcePath: 'q.md', content: 'Unrelated text.' }),
    ];
    const hits = buildLexicalIndex(list).search('pagination pages', 10);
    assert.deepEqual(hits.map((h) => h.id), [list[0].id, list[1].id]);
  });
});

describe('parent sections', () => {
  // A page whose answer is split over two subsections of "Upgrade", another page about one part.
  const page = () => [
    snip({ breadcrumb: ['Guide', 'Intro'], sourcePath: 'g.md', content: 'Welcome to the guide about servers.', lineStart: 1, lineEnd: 4 }),
    snip({ breadcrumb: ['Guide', 'Upgrade'], sourcePath: 'g.md', content: 'Upgrading to version three takes two steps.', lineStart: 5, lineEnd: 8 }),
    snip({ breadcrumb: ['Guide', 'Upgrade', 'Step one'], sourcePath: 'g.md', content: 'Rename the plugins option.', lineStart: 9, lineEnd: 12 }),
    snip({ breadcrumb: ['Guide', 'Upgrade', 'Step two'], sourcePath: 'g.md', content: 'Replace the hooks callback with async functions.', lineStart: 13, lineEnd: 20 }),
    snip({ breadcrumb: ['Guide', 'Other'], sourcePath: 'g.md', content: 'Unrelated words about logging.', lineStart: 21, lineEnd: 25 }),
    snip({ breadcrumb: ['Plugins'], sourcePath: 'p.md', content: 'The plugins option lists plugins.', lineStart: 1, lineEnd: 3 }),
  ];

  test('a parent matching better than its subsections is returned as one unit covering them', () => {
    const list = page();
    const hits = buildLexicalIndex(list).search('upgrade version three: rename plugins option and async hooks', 20);
    const first = hits[0].unit;
    assert.ok(first, 'the first hit belongs to a parent unit');
    assert.deepEqual(first.breadcrumb, ['Guide', 'Upgrade']);
    const inUnit = hits.filter((h) => h.unit?.key === first.key).map((h) => h.id).sort((a, b) => a - b);
    assert.deepEqual(inUnit, [list[1].id, list[2].id, list[3].id]);
    // No snippet comes twice (its own section is not repeated after the parent).
    assert.equal(new Set(hits.map((h) => h.id)).size, hits.length);
    const byId = new Map(list.map((s) => [s.id, s]));
    const out = assembleContext(hits.map((h) => ({ snippet: byId.get(h.id)!, score: h.score, ...(h.unit ? { unit: h.unit } : {}) })), 'upgrade plugins hooks', 5000);
    assert.deepEqual([out[0].sourcePath, out[0].lineStart, out[0].lineEnd], ['g.md', 5, 20]);
    assert.deepEqual(out[0].breadcrumb, ['Guide', 'Upgrade']);
    assert.ok(out[0].content.includes('Rename the plugins option') && out[0].content.includes('async functions'));
  });

  test('a question about one subsection still gets that subsection; parents over the token cap and parentWeight 0 are off', () => {
    const list = page();
    // (Merging with neighbours off: "Step one" alone is the subject here.)
    const one = buildLexicalIndex(list, { ...DEFAULT_BM25, mergeRatio: 0 }).search('rename the plugins option', 20);
    assert.equal(one[0].unit, undefined);
    const q = 'upgrade version three: rename plugins option and async hooks';
    assert.ok(buildLexicalIndex(list, { ...DEFAULT_BM25, parentWeight: 0, mergeRatio: 0 }).search(q, 20).every((h) => h.unit === undefined));
    assert.ok(buildLexicalIndex(list, { ...DEFAULT_BM25, parentMaxTokens: 5, mergeRatio: 0 }).search(q, 20).every((h) => h.unit === undefined));
  });
});

describe('adjacent sections merged', () => {
  // Four sections of one page in a row, and one of another page.
  const page = () => [
    snip({ breadcrumb: ['Timers', 'Intro'], sourcePath: 't.md', content: 'Timers in tests.', lineStart: 1, lineEnd: 4 }),
    snip({ breadcrumb: ['Timers', 'runAllTimers'], sourcePath: 't.md', content: 'Runs every pending timer until none is left.', lineStart: 5, lineEnd: 10 }),
    snip({ breadcrumb: ['Timers', 'runAllTimersAsync'], sourcePath: 't.md', content: 'Runs every pending timer, awaiting promise callbacks between timers.', lineStart: 11, lineEnd: 16 }),
    snip({ breadcrumb: ['Timers', 'Unrelated'], sourcePath: 't.md', content: 'Something about logging output and colours.', lineStart: 17, lineEnd: 20 }),
    snip({ breadcrumb: ['Other', 'Timer'], sourcePath: 'o.md', content: 'A timer of another page: pending timer notes.', lineStart: 1, lineEnd: 3 }),
  ];
  const byId = (list: StoredSnippet[]) => new Map(list.map((s) => [s.id, s]));

  test('a unit grows over adjacent well-matching sections of its file into one contiguous snippet; weak neighbours stay out', () => {
    const list = page();
    const q = 'run pending timer with promise callbacks';
    const hits = buildLexicalIndex(list).search(q, 20);
    const first = hits[0].unit;
    assert.ok(first, 'the best section and its neighbour form one unit');
    assert.deepEqual(first.breadcrumb, ['Timers', 'runAllTimers · runAllTimersAsync']);
    assert.deepEqual(hits.filter((h) => h.unit?.key === first.key).map((h) => h.id).sort((a, b) => a - b), [list[1].id, list[2].id]);
    const map = byId(list);
    const out = assembleContext(hits.map((h) => ({ snippet: map.get(h.id)!, score: h.score, ...(h.unit ? { unit: h.unit } : {}) })), q, 5000);
    assert.deepEqual([out[0].sourcePath, out[0].lineStart, out[0].lineEnd], ['t.md', 5, 16]);
    assert.ok(out[0].content.includes('until none is left') && out[0].content.includes('awaiting promise'), 'the whole text of both sections is in the snippet');
    assert.ok(out.every((s) => !s.content.includes('logging')), 'the unrelated neighbour is not merged');
    const other = hits.find((h) => map.get(h.id)!.sourcePath === 'o.md');
    assert.ok(other, 'the other page is found');
    assert.ok(hits.every((h) => h.unit?.key !== other.unit?.key || map.get(h.id)!.sourcePath === 'o.md'), 'another file is never merged in');
  });

  test('merging stops at the token cap and is off with mergeRatio 0', () => {
    const list = page();
    const q = 'run pending timer with promise callbacks';
    const noParents = { ...DEFAULT_BM25, parentWeight: 0 };
    assert.ok(buildLexicalIndex(list, noParents).search(q, 20).some((h) => h.unit !== undefined));
    const capped = buildLexicalIndex(list, { ...noParents, mergeMaxTokens: list[2].tokens! + 1 }).search(q, 20);
    assert.ok(capped.every((h) => h.unit === undefined));
    assert.ok(buildLexicalIndex(list, { ...noParents, mergeRatio: 0 }).search(q, 20).every((h) => h.unit === undefined));
  });
});

describe('context assembly', () => {
  const hit = (snippet: StoredSnippet, score: number): SearchHit => ({ snippet, score });

  test('a section answers as one snippet: its prose describes its code blocks, with the section line range', () => {
    const code1 = snip({ breadcrumb: ['Koa', 'Cookies'], code: 'ctx.cookies.set("a", 1)', lineStart: 12, lineEnd: 14 });
    const code2 = snip({ breadcrumb: ['Koa', 'Cookies'], code: 'ctx.cookies.get("a")', lineStart: 16, lineEnd: 18 });
    const info = snip({ breadcrumb: ['Koa', 'Cookies'], content: 'Set and read cookies.', lineStart: 10, lineEnd: 20 });
    const other = snip({ breadcrumb: ['Koa', 'State'], content: 'ctx.state holds data.', lineStart: 21, lineEnd: 25 });
    const out = assembleContext([hit(code1, 5), hit(code2, 5), hit(info, 5), hit(other, 4)], 'cookies', 5000);
    assert.equal(out.length, 2);
    assert.equal(out[0].type, 'code');
    assert.equal(out[0].description, 'Set and read cookies.');
    assert.deepEqual(out[0].codeList?.map((c) => c.code), [code1.code, code2.code]);
    assert.deepEqual([out[0].lineStart, out[0].lineEnd], [10, 20]);
    const json = toContextJson({ library: {} as never, version: '', snippets: out, totalTokens: 0 });
    assert.equal(json.codeSnippets[0].codeList.length, 2);
    assert.deepEqual([json.codeSnippets[0].rank, json.infoSnippets[0].rank], [1, 2]);
    const text = toContextText({ library: {} as never, version: '', snippets: out, totalTokens: 0 });
    assert.equal(text.split('```js').length - 1, 2);
  });

  test('units below the relative cut-off are left out, repeated content is dropped, the budget holds', () => {
    const a = snip({ breadcrumb: ['A'], content: 'alpha '.repeat(40), sourcePath: 'a.md' });
    const same = snip({ breadcrumb: ['B'], content: 'alpha '.repeat(40), sourcePath: 'b.md' });
    const c = snip({ breadcrumb: ['C'], content: 'gamma '.repeat(40), sourcePath: 'c.md' });
    const weak = snip({ breadcrumb: ['D'], content: 'delta', sourcePath: 'd.md' });
    const out = assembleContext([hit(a, 10), hit(same, 9), hit(c, 8), hit(weak, 10 * DEFAULT_ASSEMBLY.relativeCutoff - 0.1)], 'alpha', 5000);
    assert.deepEqual(out.map((s) => s.id), [a.id, c.id]);
    const tight = assembleContext([hit(a, 10), hit(c, 9)], 'alpha', a.tokens + 5);
    assert.deepEqual(tight.map((s) => s.id), [a.id]);
    assert.deepEqual(assembleContext([], 'alpha', 5000), []);
  });

  test('a section over the unit size keeps the parts that match the question, in document order', () => {
    const filler = 'lorem ipsum dolor sit amet '.repeat(100);
    const parts = [
      snip({ breadcrumb: ['Big'], content: 'Intro. ' + filler, lineStart: 1, lineEnd: 50 }),
      snip({ breadcrumb: ['Big'], content: filler, lineStart: 51, lineEnd: 100 }),
      snip({ breadcrumb: ['Big'], content: 'The retry option sets attempts. ' + filler, lineStart: 101, lineEnd: 150 }),
    ];
    const out = assembleContext(parts.map((p) => hit(p, 5)), 'retry attempts', 5000, { ...DEFAULT_ASSEMBLY, maxUnitTokens: parts[2].tokens + 10 });
    assert.equal(out.length, 1);
    assert.deepEqual([out[0].lineStart, out[0].lineEnd], [101, 150]);
  });
});

describe('question words', () => {
  const docs = [
    snip({ breadcrumb: ['Routes', 'Delete a route'], content: 'Call router.delete with the path of the route to take it out.', sourcePath: 'docs/routes.md' }),
    snip({ breadcrumb: ['Routes', 'Add a route'], content: 'Call router.add with a path and a handler, for example a handler that answers json.', sourcePath: 'docs/routes.md' }),
    snip({ breadcrumb: ['Examples'], content: 'Example after example: an example of every example.', sourcePath: 'docs/examples.md' }),
  ];
  const index = buildLexicalIndex(docs.map((s) => ({ ...s })));

  test('a general-English synonym of a question word finds the section that uses the other word', () => {
    const hits = index.search('How do I remove a route?', 10);
    assert.equal(hits[0]?.id, docs[0].id);
  });

  test('filler words of the question ("for example", "possible") do not pull in sections about them', () => {
    const hits = index.search('Is it possible to add a route, for example?', 10);
    assert.equal(hits[0]?.id, docs[1].id);
    assert.ok(!hits.some((h) => h.id === docs[2].id));
  });

  test('the synonyms cover general software verbs and nouns and spelling variants', () => {
    const list = [
      snip({ breadcrumb: ['Lists', 'Inserting items'], content: 'Items go at the end of the collection.', sourcePath: 'docs/lists.md' }),
      snip({ breadcrumb: ['Styling', 'Colours'], content: 'Each palette entry has a hex code.', sourcePath: 'docs/style.md' }),
      snip({ breadcrumb: ['Jobs', 'Aborting a job'], content: 'A running job stops at its next checkpoint.', sourcePath: 'docs/jobs.md' }),
    ];
    const idx = buildLexicalIndex(list);
    assert.equal(idx.search('how to append?', 10)[0]?.id, list[0].id);
    assert.equal(idx.search('which color', 10)[0]?.id, list[1].id);
    assert.equal(idx.search('cancel a task', 10)[0]?.id, list[2].id);
    const off = buildLexicalIndex(list, { ...DEFAULT_BM25, synonymWeight: 0 });
    for (const q of ['how to append?', 'which color', 'cancel a task']) assert.equal(off.search(q, 10).length, 0, q);
  });

  test('a synonym reached from two asked words is added once', () => {
    const list = [
      snip({ breadcrumb: ['Files', 'Overview'], content: 'Erase old files now and then.', sourcePath: 'docs/files.md' }),
      snip({ breadcrumb: ['Other', 'Overview'], content: 'Nothing to see in this text.', sourcePath: 'docs/other.md' }),
    ];
    const idx = buildLexicalIndex(list);
    const one = idx.search('delete', 10)[0];
    const two = idx.search('delete remove', 10)[0];
    assert.equal(one?.id, list[0].id);
    assert.ok(Math.abs(two.score - one.score) < 1e-12);
  });

  test('synonyms and fillers can be turned off', () => {
    const plain = buildLexicalIndex(docs.map((s) => ({ ...s })), { ...DEFAULT_BM25, synonymWeight: 0, dropFillers: false });
    assert.ok(plain.search('Is it possible to add a route, for example?', 10).some((h) => h.id === docs[2].id));
    assert.ok(plain.search('remove', 10).length === 0);
  });
});

describe("a page's search words", () => {
  // The markdown chunker puts a page's front-matter keywords and aliases in the description of its
  // first info snippet.
  const page = [
    snip({ breadcrumb: ['css.Sass'], content: 'Transpiles Sass to CSS.', description: 'toCSS\nfunctions resources tocss', sourcePath: 'docs/sass.md' }),
    snip({ breadcrumb: ['css.Sass', 'Options'], content: 'The function accepts an options map.', sourcePath: 'docs/sass.md' }),
    snip({ breadcrumb: ['css.Sass', 'Dart Sass'], content: 'Install the Dart transpiler for the latest features.', sourcePath: 'docs/sass.md' }),
    snip({ breadcrumb: ['Pipes', 'Options'], content: 'Pipes take an options map too.', sourcePath: 'docs/pipes.md' }),
  ];

  test('are a field of every section of the page, so a question using them finds it', () => {
    const idx = buildLexicalIndex(page);
    const hits = idx.search('toCSS options', 10);
    assert.equal(hits[0]?.id, page[1].id);
    assert.ok(idx.search('tocss transpiler', 10)[0]?.id === page[2].id);
  });

  test('weight 0 turns them off', () => {
    const idx = buildLexicalIndex(page, { ...DEFAULT_BM25, fields: { ...DEFAULT_BM25.fields, meta: { weight: 0, b: 0 } }, prefixWeight: 0 });
    assert.equal(idx.search('tocss', 10).length, 0);
    const hits = idx.search('toCSS options', 10);
    assert.ok(hits.some((h) => h.id === page[3].id) && hits.some((h) => h.id === page[1].id));
  });
});

describe('question words the index does not hold', () => {
  test('are searched as the index words sharing their longest prefix (>= 5 letters, or all of the shorter word)', () => {
    const vocab = ['configur', 'configuration', 'confirm', 'lunr', 'lunrs', 'style'].sort();
    const idf = () => 1;
    assert.deepEqual(nearestByPrefix(vocab, 'configurabl', 5, 3, idf), ['configuration']); // "configura", the longest
    assert.deepEqual(nearestByPrefix(vocab, 'configs', 5, 3, idf).sort(), ['configur', 'configuration']);
    assert.deepEqual(nearestByPrefix(vocab, 'lunrj', 5, 3, idf), ['lunr']); // "lunr" is all of the shorter word
    assert.deepEqual(nearestByPrefix(vocab, 'stylus', 5, 3, idf), []); // "styl": 4 letters, neither word whole
    assert.deepEqual(nearestByPrefix(vocab, 'styl', 6, 3, idf), ['style']);
    assert.deepEqual(nearestByPrefix(vocab, 'configs', 8, 3, idf), []); // minLength 8
    // At most `max` words, the most frequent (lowest idf) first.
    assert.deepEqual(nearestByPrefix(vocab, 'configs', 5, 1, (w) => (w === 'configuration' ? 0.5 : 2)), ['configuration']);
  });

  test('find the section using the known form, at a reduced weight; code names are not mapped; prefixWeight 0 turns it off', () => {
    const list = [
      snip({ breadcrumb: ['Server', 'Configuration'], content: 'Every option can be configured at start.', sourcePath: 'docs/server.md' }),
      snip({ breadcrumb: ['Other', 'Overview'], content: 'Nothing to see in this text.', sourcePath: 'docs/other.md' }),
    ];
    const idx = buildLexicalIndex(list);
    const hits = idx.search('which options are configurable', 10);
    assert.equal(hits[0]?.id, list[0].id);
    assert.equal(idx.search('configurable', 10)[0]?.id, list[0].id);
    // Below the score of the words it is mapped to (configur, configuration) asked as such: the
    // mapped words weigh prefixWeight.
    assert.ok(idx.search('configurable', 10)[0].score < idx.search('configured configuration', 10)[0].score);
    assert.equal(idx.search('configurableThing', 10).length, 0);
    const off = buildLexicalIndex(list, { ...DEFAULT_BM25, prefixWeight: 0 });
    assert.equal(off.search('configurable', 10).length, 0);
  });
});
