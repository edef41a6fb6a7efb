import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { infoSnippet } from '../../helpers/info-snippet.ts';
import { buildLexicalIndex, DEFAULT_BM25, type Bm25Params } from '../../../core/search/lexical-index.ts';
import { pageWordsText, readPageWords } from '../../../core/search/page-words.ts';

const snip = (breadcrumb: string[], sourcePath: string, content: string) => infoSnippet(sourcePath, breadcrumb, content);

describe('rank fusion with a page-level ranking', () => {
  // b.md: one short section whose heading is the question, on a page about nothing else;
  // a.md: a page about the question's subject throughout, whose first section matches less well.
  const corpus = () => [
    snip(['Retry timeout'], 'b.md', 'A note.'),
    snip(['Requests', 'Failures'], 'a.md', 'A failed request is sent again after a retry timeout.'),
    snip(['Requests', 'Backoff'], 'a.md', 'Each retry waits longer; the timeout doubles with every retry.'),
    snip(['Requests', 'Limits'], 'a.md', 'Retries stop when the total timeout is spent; a retry timeout of zero turns retries off.'),
    snip(['Logging', 'Levels'], 'c.md', 'Levels of the logger: debug, info, warn, error.'),
    snip(['Logging', 'Files'], 'c.md', 'Log files rotate daily.'),
  ];
  // Units as they are (no parents, no merging, no neighbour lift), so the order is the sections'.
  const plain: Bm25Params = { ...DEFAULT_BM25, parentWeight: 0, mergeRatio: 0, neighbourWeight: 0 };
  const q = 'retry timeout';

  test('a section of the page that matches best overtakes a lone section of a page that matches less', () => {
    const list = corpus();
    const off = buildLexicalIndex(list, { ...plain, fusionK: 5, pageFusion: 0 }).search(q, 10);
    assert.equal(off[0].id, list[0].id, 'without fusion (pageFusion 0) the lone heading match comes first');
    const on = buildLexicalIndex(list, { ...plain, fusionK: 5, pageFusion: 2 }).search(q, 10);
    assert.equal(new Set(on.map((h) => h.id)).size, on.length);
    assert.notEqual(on[0].id, list[0].id, 'with fusion a section of a.md comes first');
    assert.equal(list.find((s) => s.id === on[0].id)!.sourcePath, 'a.md');
    assert.ok(on.some((h) => h.id === list[0].id), 'the lone section is still returned, lower');
    // The scores keep the unit ranking's values in order, so the answer's cut-off sees no rise.
    assert.deepEqual(
      on.map((h) => h.score),
      off.map((h) => h.score),
    );
  });
});

describe("a page's front-matter summary in the page-level ranking", () => {
  // Two pages alike in every section; only x.md's summary (the chunker's carrier line after
  // PAGE_SUMMARY_MARK, core/search/page-words.ts) says what the question asks.
  const corpus = () => {
    const list = [
      infoSnippet('y.md', ['Plugins', 'Options'], 'Each plugin takes an options object.'),
      infoSnippet('y.md', ['Plugins', 'Order'], 'Plugins run in the order they are registered.'),
      infoSnippet('x.md', ['Loaders', 'Options'], 'Each loader takes an options object.'),
      infoSnippet('x.md', ['Loaders', 'Order'], 'Loaders run in the order they are registered.'),
    ];
    list[2] = { ...list[2], description: pageWordsText([], 'Transpile stylesheets before bundling.') };
    return list;
  };
  // The fusion weighted up (as in the test above), so one place of the page ranking shows.
  const fused: Bm25Params = { ...DEFAULT_BM25, parentWeight: 0, mergeRatio: 0, neighbourWeight: 0, pageFusion: 2 };
  const q = 'options to transpile stylesheets';

  test('ranks the page whose summary holds the question words first, without making them a field of its sections', () => {
    const list = corpus();
    const hits = buildLexicalIndex(list, fused).search(q, 10);
    assert.equal(hits[0]?.id, list[2].id, "x.md's Options section first: its page's summary matches");
    assert.ok(hits.some((h) => h.id === list[0].id), "y.md's Options section is still returned");
    // Without the summary the two pages tie and y.md's section, first in the index, comes first.
    const bare = list.map((s) => ({ ...s, description: '' }));
    assert.equal(buildLexicalIndex(bare, fused).search(q, 10)[0]?.id, list[0].id);
    // The summary is page-level evidence only: its words alone touch no section.
    assert.equal(buildLexicalIndex(list, fused).search('transpile stylesheets', 10).length, 0);
  });

  test("the carrier's text keeps the search words and the summary apart", () => {
    const text = pageWordsText(['scss', 'toCSS'], 'Transpiles\nSass   to CSS.');
    assert.deepEqual(readPageWords(text), { words: 'scss\ntoCSS\n', summary: 'Transpiles Sass to CSS.' });
    assert.deepEqual(readPageWords('scss\ntoCSS'), { words: 'scss\ntoCSS', summary: '' });
    assert.equal(pageWordsText([], undefined), '');
  });
});
