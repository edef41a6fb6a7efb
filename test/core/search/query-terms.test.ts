import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import vocabulary from '../../../core/search/data/vocabulary.json' with { type: 'json' };
import { expandQuery, QUESTION_FILLERS, questionWords, SYNONYM_GROUPS, SYNONYMS, synonymMap } from '../../../core/search/query-terms.ts';
import { buildThesaurus } from '../../../core/search/thesaurus.ts';
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

describe('the WordNet thesaurus (core/search/thesaurus.ts)', () => {
  // WordNet's formats: index lines `lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offsets...`
  // (a lemma's senses most frequent first), data lines `offset lex_filenum ss_type w_cnt(hex) word lex_id ...`.
  const files = new Map([
    ['index.verb', '  1 licence text\nwipe v 2 1 @ 2 1 00000001 00000002  \nerase v 1 1 @ 1 1 00000001  \nrub v 1 0 1 1 00000002  \ntake_off v 1 0 1 0 00000001  \n'],
    ['data.verb', '  1 licence text\n00000001 35 v 03 wipe 0 erase 0 take_off 0 000 | remove by wiping  \n00000002 35 v 02 rub 0 wipe 0 000 | move over something  \n'],
  ]);

  test("a word's synonyms are the single words of its first senses, stemmed; mutual keeps a synonym's own first sense only", () => {
    assert.deepEqual(buildThesaurus(files, { senses: 1, mutual: false }).get('wipe'), ['eras']);
    assert.deepEqual(buildThesaurus(files, { senses: 2, mutual: false }).get('wipe'), ['eras', 'rub']);
    assert.deepEqual(buildThesaurus(files, { senses: 1, mutual: false }).get('rub'), ['wipe']);
    // rub's first sense is wipe's second one: not mutual.
    assert.equal(buildThesaurus(files, { senses: 1, mutual: true }).get('rub'), undefined);
    assert.deepEqual(buildThesaurus(files, { senses: 1, mutual: true }).get('eras'), ['wipe']);
  });

  test('expandQuery adds the synonyms the index holds, at most thesaurusPerWord, only for asked words the library uses little', () => {
    const table = new Map([['wipe', ['eras', 'rub', 'clear']]]);
    // 'eras' absent from the index; 'wipe' in 1 of about 100 sections (idf 4.3), 'cooki' common (idf 0.5).
    const idf = (w: string) => ({ rub: 2, clear: 1, wipe: 4.3, cooki: 0.5 })[w] ?? 0;
    const ctx = { synonyms: new Map(), synonymWeight: 0, prefixWeight: 0, prefixMinLength: 5, idf, thesaurus: table, thesaurusWeight: 0.3, thesaurusPerWord: 1 };
    assert.deepEqual(expandQuery('wipe cookies', ['wipe', 'cooki'], ctx), [
      { t: 'wipe', w: 1 },
      { t: 'cooki', w: 1 },
      { t: 'rub', w: 0.3 },
    ]);
    assert.deepEqual(expandQuery('wipe cookies', ['wipe', 'cooki'], { ...ctx, thesaurusMaxShare: 0 }), [
      { t: 'wipe', w: 1 },
      { t: 'cooki', w: 1 },
    ]);
    assert.equal(expandQuery('wipe cookies', ['wipe', 'cooki'], { ...ctx, thesaurusMaxShare: 0.05 }).length, 3);
    assert.equal(expandQuery('wipe cookies', ['wipe', 'cooki'], { ...ctx, thesaurusWeight: 0 }).length, 2);
  });
});
