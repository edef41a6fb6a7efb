import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredSnippet } from '../../../core/contracts.ts';
import { buildLatentModel, DEFAULT_LATENT } from '../../../core/search/latent.ts';
import { buildLexicalIndex, DEFAULT_BM25 } from '../../../core/search/lexical-index.ts';
import { infoSnippet } from '../../helpers/info-snippet.ts';

/** Two subjects, cars and gardens: each document speaks of one of them. */
const DOCS = [
  'car engine automobile wheel',
  'car engine road',
  'automobile wheel road',
  'car wheel engine',
  'flower garden petal',
  'flower petal soil',
  'garden soil water',
  'petal water flower',
].map((d) => d.split(' '));

const options = { ...DEFAULT_LATENT, rank: 2 };

function sims(model: ReturnType<typeof buildLatentModel>, terms: string[]): number[] {
  const q = model.query(
    terms,
    terms.map(() => 1),
  );
  assert.ok(q);
  return DOCS.map((_, d) => model.similarity(q, d));
}

describe('latent model (LSI)', () => {
  test('a word is near the documents of its subject, also those that do not hold it', () => {
    const model = buildLatentModel([DOCS], options);
    assert.equal(model.rank, 2);
    const s = sims(model, ['automobile']);
    // Document 1 ("car engine road") never says "automobile", but its words keep its company.
    assert.ok(s[1] > 0.5, `car document: ${s[1]}`);
    for (const garden of [4, 5, 6, 7]) assert.ok(s[1] > s[garden] + 0.5, `car ${s[1]} against garden ${s[garden]}`);
    const g = sims(model, ['soil']);
    assert.ok(g[7] > g[1] + 0.5);
  });

  test('the fields of a document are read together, and a build is deterministic', () => {
    const split = buildLatentModel([DOCS.map((d) => d.slice(0, 1)), DOCS.map((d) => d.slice(1))], options);
    const whole = buildLatentModel([DOCS], options);
    assert.deepEqual(sims(split, ['automobile', 'soil']), sims(whole, ['automobile', 'soil']));
  });

  test('unknown words and too small a library give no query', () => {
    const model = buildLatentModel([DOCS], options);
    assert.equal(model.query(['bicycle'], [1]), undefined);
    const tiny = buildLatentModel([[['alone', 'words']]], options);
    assert.equal(tiny.rank, 0);
    assert.equal(tiny.query(['alone'], [1]), undefined);
  });
});

/** A one-snippet section of its own page (the lines and size every section of these tests shares). */
function section(heading: string, content: string, file: string): StoredSnippet {
  return { ...infoSnippet(`docs/${file}.md`, [heading], content), lineStart: 1, lineEnd: 2, tokens: 10 };
}

describe('latent model in the lexical index', () => {
  // "renew" is in both of the first two sections, alike in every field; the library speaks of
  // renewing with cars, so the car section is the one the question is about.
  const docs = [
    section('Garden notes', 'flower petal soil renew', 'garden'),
    section('Engine notes', 'car engine wheel renew', 'engine'),
    section('Car care', 'car engine road renew', 'care'),
    section('Car parts', 'car wheel road engine', 'parts'),
    section('Flower care', 'flower petal garden soil', 'flower'),
    section('Garden tools', 'garden soil water petal', 'tools'),
  ];
  const order = (hits: Array<{ id: number }>) => hits.map((h) => h.id).filter((id) => id === docs[0].id || id === docs[1].id);

  test('of two sections matching a question alike, the one of its subject comes first', () => {
    const index = buildLexicalIndex(docs, { ...DEFAULT_BM25, latentRank: 2, latentWeight: 0.1 });
    assert.deepEqual(order(index.search('renew', 10)), [docs[1].id, docs[0].id]);
  });

  test("latentWeight 0 (the default) turns it off (the tie keeps document order)", () => {
    const index = buildLexicalIndex(docs, { ...DEFAULT_BM25, latentRank: 2, latentWeight: 0 });
    assert.deepEqual(order(index.search('renew', 10)), [docs[0].id, docs[1].id]);
  });
});
