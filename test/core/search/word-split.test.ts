import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredSnippet } from '../../../core/contracts.ts';
import { buildLexicalIndex, DEFAULT_BM25 } from '../../../core/search/lexical-index.ts';
import { tokenize } from '../../../core/search/tokenize.ts';
import { corpusSplitter } from '../../../core/search/word-split.ts';
import { infoSnippet } from '../../helpers/info-snippet.ts';

/** Prose of sections, tokenized as the index does. */
const prose = (...texts: string[]) => texts.map((t) => tokenize(t));

test('a word written as one is cut where both halves are words of the prose', () => {
  const split = corpusSplitter(
    prose(
      'Retrieve the resource at a url and read each line.',
      'A url names a resource; retrieve it again to read the next line.',
      'Give the url of the file to retrieve, then read it line by line.',
      'Understand the rules before you stand under them.',
    ),
  );
  assert.deepEqual(split(tokenize('urlretrieve')[0]), ['url', 'retriev']);
  // The stemmer cut the whole's final e: the half is found as the prose indexes it.
  assert.deepEqual(split(tokenize('readlines')[0]), ['read', 'line']);
  // A word of the prose itself stays whole; unknown halves, short words and names with digits too.
  assert.deepEqual(split('understand'), []);
  assert.deepEqual(split('xyzretriev'), []);
  assert.deepEqual(split('urlread'.slice(0, 5)), []);
  assert.deepEqual(split('url2read'), []);
});

test('the halves need to be used in several sections: one stray word does not cut', () => {
  const split = corpusSplitter(prose('Retrieve it.', 'Retrieve it again.', 'Retrieve once more.', 'A zorp.'));
  assert.deepEqual(split('zorpretriev'), []);
});

test('the index finds a one-word identifier by its halves, and by itself first', () => {
  // One page each: no two sections answer as one unit.
  const snip = (heading: string, content: string): StoredSnippet => infoSnippet(`${heading}.md`, [heading], content);
  const snippets = [
    snip('urlretrieve', 'Copy a network object to a local file.'),
    snip('Resources', 'Retrieve a resource by name. Retrieve it again when it changed.'),
    snip('Cleanup', 'Remove the temporary files a url left.'),
    snip('Headers', 'Each url request sends headers; retrieve them from the response.'),
    snip('Errors', 'A url that cannot be opened raises an error.'),
    snip('Opener', 'Build an opener for a url; retrieve it with the handlers.'),
  ];
  const entry = snippets[0].id;
  const rank = (splitWords: boolean, q: string) =>
    buildLexicalIndex(snippets, { ...DEFAULT_BM25, splitWords })
      .search(q, 10)
      .findIndex((r) => r.id === entry);
  assert.equal(rank(true, 'how do I retrieve a url'), 0);
  assert.ok(rank(false, 'how do I retrieve a url') !== 0, 'without the halves another section comes first');
  assert.equal(rank(true, 'urlretrieve'), 0);
});
