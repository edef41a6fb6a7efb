import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import vocabulary from '../../../core/search/data/vocabulary.json' with { type: 'json' };
import { expandQuery, QUESTION_FILLERS, questionWords, SYNONYM_GROUPS, SYNONYMS, synonymMap } from '../../../core/search/query-terms.ts';
import { tokenize } from '../../../core/search/tokenize.ts';

describe('the vocabulary data file (core/search/data/vocabulary.json)', () => {
  test('every category says why its groups are general vocabulary, and every group is two or more distinct words', () => {
    assert.ok(vocabulary.categories.length > 0);
    for (const c of vocabulary.categories) {
      assert.ok(c.why.length > 20, `category ${c.name} has no reason`);
      for (const g of c.groups) assert.ok(new Set(tokenize(g)).size >= 2, `group '${g}' has fewer than two distinct words`);
    }
    assert.equal(SYNONYM_GROUPS.length, vocabulary.categories.reduce((n, c) => n + c.groups.length, 0));
    assert.equal(new Set(SYNONYM_GROUPS).size, SYNONYM_GROUPS.length, 'a group is listed twice');
  });

  test('the synonym map is symmetric and stemmed', () => {
    for (const [w, others] of SYNONYMS) for (const o of others) assert.ok(SYNONYMS.get(o)?.includes(w), `${o} does not lead back to ${w}`);
    assert.deepEqual([...(SYNONYMS.get('folder') ?? [])], ['directori']);
    assert.deepEqual(synonymMap(['colours colour color']).get('colour'), ['color']);
  });

  test('filler words are dropped from a question, unless nothing else is left', () => {
    assert.ok(QUESTION_FILLERS.has('possibl'));
    assert.deepEqual(questionWords('is it possible to delete a cookie', true), ['delet', 'cooki']);
    assert.deepEqual(questionWords('is it possible to delete a cookie', false), ['possibl', 'delet', 'cooki']);
    assert.deepEqual(questionWords('possible', true), ['possibl']);
  });
});

describe('expandQuery', () => {
  const idf = (w: string) => (['cooki', 'remov', 'configur', 'configuration'].includes(w) ? 1 : 0);
  const base = { synonyms: SYNONYMS, synonymWeight: 0.5, prefixWeight: 0.7, prefixMinLength: 5, idf };

  test('asked words at 1, then each synonym once at synonymWeight', () => {
    const got = expandQuery('delete or erase a cookie', ['delet', 'eras', 'cooki'], base);
    assert.deepEqual(got, [
      { t: 'delet', w: 1 },
      { t: 'eras', w: 1 },
      { t: 'cooki', w: 1 },
      { t: 'remov', w: 0.5 },
    ]);
  });

  test('a plain word the index lacks is searched as the words sharing its longest prefix; code names are not', () => {
    const vocabularyWords = ['configur', 'configuration', 'cooki', 'remov'];
    const got = expandQuery('configurable configurableThing', ['configur', 'configurabl', 'configurablething'], { ...base, synonymWeight: 0, vocabulary: vocabularyWords });
    assert.deepEqual(got, [
      { t: 'configur', w: 1 },
      { t: 'configurabl', w: 1 },
      { t: 'configurablething', w: 1 },
      { t: 'configuration', w: 0.7 },
    ]);
  });
});
