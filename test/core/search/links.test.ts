import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { infoSnippet as snip } from '../../helpers/info-snippet.ts';
import { buildLexicalIndex, DEFAULT_BM25 } from '../../../core/search/lexical-index.ts';
import { inlinkCounts, resolveSectionLinks } from '../../../core/search/links.ts';
import { groupSections } from '../../../core/search/sections.ts';

describe('links between sections', () => {
  const list = [
    snip(
      'docs/guide/intro.md',
      ['Intro'],
      [
        'Start with [routing](./routing.md), then [throwing](../api/context.md#ctxthrow) an error.',
        'Filter with [where](/functions/collections/where/) and read the [config](/guide/config/) guide.',
        'External [docs](https://example.com/x), an image ![shot](./routing.md), this [page](#intro),',
        'a [missing](missing.md) page, and the [options](./routing.md#options-1) of the router.',
      ].join('\n'),
    ),
    snip('docs/guide/intro.md', ['Intro', 'See also'], '- [Routing](./routing.md)\n- [Context](../api/context.md)'),
    snip('docs/guide/routing.md', ['Routing'], 'Routes map paths to handlers.', 'routing'),
    snip('docs/guide/routing.md', ['Routing', 'Options'], 'The router takes options.', 'options'),
    snip('docs/api/context.md', ['Context'], 'The context of a request.'),
    snip('docs/api/context.md', ['Context', 'ctx.throw(status)'], 'Throws an HTTP error.', 'ctxthrowstatus'),
    snip('docs/api/context.md', ['Context', 'ctx.throw'], 'Throws an error.'),
    snip('content/en/functions/collections/where.md', ['collections.Where'], 'Returns the matching elements.'),
    snip('docs/guide/config/README.md', ['Config'], 'How to configure the app.'),
  ];
  const sections = groupSections(list);
  const at = (path: string, heading: string) => sections.findIndex((m) => list[m[0]].sourcePath === path && list[m[0]].breadcrumb.at(-1) === heading);

  test('relative and site paths reach files (index/README pages too); #anchors reach the section by anchor or heading slug', () => {
    const { targets, stats } = resolveSectionLinks(sections, list);
    assert.deepEqual(
      [...targets[0]].sort((a, b) => a - b),
      [
        at('docs/guide/routing.md', 'Routing'), // a page link: the page's first section
        at('docs/guide/routing.md', 'Options'), // #options-1: the second "Options" of a page, found as the first
        at('docs/api/context.md', 'ctx.throw'), // by the heading's slug
        at('content/en/functions/collections/where.md', 'collections.Where'), // a site path, by path suffix
        at('docs/guide/config/README.md', 'Config'), // a site path to a folder's README
      ].sort((a, b) => a - b),
    );
    // External links and images are not counted; the same-page link is, and is dropped.
    assert.deepEqual(stats, { links: 7 + 2, self: 1, toFile: 5 + 2, toAnchor: 2, listSections: 1 });
  });

  test("a list of links (a section whose words are mostly link text) endorses nothing; nor does a page's link to itself", () => {
    const { targets } = resolveSectionLinks(sections, list);
    assert.equal(targets[1].length, 0);
    for (const [k, t] of targets.entries()) for (const to of t) assert.notEqual(list[sections[to][0]].sourcePath, list[sections[k][0]].sourcePath);
  });
});

describe('hyperlink score propagation', () => {
  const docs = [
    snip('docs/guide/lists.md', ['Lists', 'Filtering pages'], 'To filter the pages of a list, use [where](/functions/collections/where/) in the template.'),
    snip('docs/guide/sorting.md', ['Sorting', 'Order'], 'Sort the pages of a list by date or by weight.'),
    snip('docs/functions/collections/where.md', ['collections.Where'], 'Returns the elements of a collection that satisfy a comparison.'),
    snip('docs/functions/collections/where.md', ['collections.Where', 'Operators'], 'The comparison operators: eq, ne, lt, gt, in.'),
  ];
  const q = 'how do I filter the pages of a list';
  // The link lift alone (the page-level fusion re-orders units by their pages' ranks).
  const base = { ...DEFAULT_BM25, pageFusion: 0 };

  test('a section linked from a well-matching section is lifted, up to the linking section and not above it', () => {
    const hits = buildLexicalIndex(docs, base).search(q, 10);
    assert.deepEqual(
      hits.slice(0, 3).map((h) => h.id),
      [docs[0].id, docs[2].id, docs[1].id],
    );
    assert.ok(hits[1].score <= hits[0].score);
  });

  test('linkWeight 0 turns it off: the linked section shares no word with the question', () => {
    const hits = buildLexicalIndex(docs, { ...base, linkWeight: 0 }).search(q, 10);
    assert.deepEqual(
      hits.map((h) => h.id),
      [docs[0].id, docs[1].id],
    );
  });

  test('a section that links nothing lifts nothing; only the best linkSources sections lend their score', () => {
    const unlinked = docs.map((s) => ({ ...s, content: s.content.replace(/\[where\]\([^)]*\)/, 'where') }));
    assert.ok(!buildLexicalIndex(unlinked, base).search(q, 10).some((h) => h.id === docs[2].id));
    // The link moved to the second-best section: lent with 2 sources, not with 1.
    const second = unlinked.map((s, i) => (i === 1 ? { ...s, content: s.content + ' See [where](../functions/collections/where.md).' } : s));
    assert.ok(buildLexicalIndex(second, { ...base, linkSources: 2 }).search(q, 10).some((h) => h.id === docs[2].id));
    assert.ok(!buildLexicalIndex(second, { ...base, linkSources: 1 }).search(q, 10).some((h) => h.id === docs[2].id));
  });

  test('a linked section that matches the question too rises at most to the linking section, not above it', () => {
    const matching = docs.map((s, i) => (i === 2 ? { ...s, content: 'Returns the pages of a list that satisfy a comparison.' } : s));
    const plain = buildLexicalIndex(matching, { ...base, linkWeight: 0 }).search(q, 10);
    const own = plain.find((h) => h.id === docs[2].id)!.score;
    const guide = plain[0].score;
    assert.equal(plain[0].id, docs[0].id);
    assert.ok(own > 0 && own + guide > guide);
    const hits = buildLexicalIndex(matching, { ...base, linkWeight: 1 }).search(q, 10);
    const lifted = hits.find((h) => h.id === docs[2].id)!.score;
    assert.equal(lifted, guide, 'capped at the linking section score, not own + weight x it');
    assert.equal(hits[0].id, docs[0].id);
  });
});

describe('in-link prior', () => {
  const pages = [
    snip('docs/a.md', ['Alpha', 'Response cache'], 'Keep responses in a cache for a while.'),
    snip('docs/b.md', ['Betas', 'Response cache'], 'Keep responses in a cache for a while.'),
    snip('docs/guide/one.md', ['One'], 'Speed it up with the [response cache](../b.md#response-cache), see [again](../b.md).'),
    snip('docs/guide/two.md', ['Two'], 'Also the [response cache](/b/) helps.'),
  ];
  const q = 'keep responses in a cache';
  const base = { ...DEFAULT_BM25, pageFusion: 0, linkWeight: 0 };

  test('each other file linking to a section counts once', () => {
    const sections = groupSections(pages);
    const counts = inlinkCounts(sections, pages, resolveSectionLinks(sections, pages).targets);
    assert.deepEqual([...counts], [0, 2, 0, 0]);
  });

  test('of two sections matching alike, the one the library links to comes first; inlinkPrior 0 turns it off', () => {
    const off = buildLexicalIndex(pages, { ...base, inlinkPrior: 0 }).search(q, 10);
    assert.equal(off[0].score, off[1].score);
    assert.equal(off[0].id, pages[0].id, 'a tie keeps the document order');
    const on = buildLexicalIndex(pages, { ...base, inlinkPrior: 0.03 }).search(q, 10);
    assert.equal(on[0].id, pages[1].id);
    assert.ok(Math.abs(on[0].score / off[0].score - (1 + 0.03 * Math.log(3))) < 1e-9);
  });
});
