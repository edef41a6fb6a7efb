import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildLexicalIndex, DEFAULT_BM25 } from '../../../core/search/lexical-index.ts';
import { buildPositions } from '../../../core/search/proximity.ts';
import { tokenize } from '../../../core/search/tokenize.ts';

describe('term proximity', () => {
  const near = 'Set the retry timeout per request in the client options. ' + 'Other words fill this section. '.repeat(3);
  const far = 'The retry count lives in one place. ' + 'Other words fill this section. '.repeat(3) + 'Unrelated: the timeout of a socket.';
  const fields = [[tokenize(near), tokenize(far)]];

  test('two question words close together score higher than the same words far apart', () => {
    const pos = buildPositions(fields);
    const score = pos.prepare(
      [
        { term: 'retri', weight: 2, group: 0 },
        { term: 'timeout', weight: 3, group: 1 },
      ],
      10,
    )!;
    const a = score([0], pos.avgLength);
    const b = score([1], pos.avgLength);
    assert.ok(a > 0, 'adjacent pair scores');
    assert.equal(b, 0, 'a pair further apart than the window does not');
    // At most the lighter word's weight, however often the pair recurs.
    assert.ok(score([0, 0, 0, 0], pos.avgLength) <= 2 + 1e-9);
  });

  test('terms of one asked word are not paired, and one word alone gives no scorer', () => {
    const pos = buildPositions(fields);
    assert.equal(pos.prepare([{ term: 'retri', weight: 2, group: 0 }, { term: 'timeout', weight: 3, group: 0 }], 10), undefined);
    assert.equal(pos.prepare([{ term: 'retri', weight: 2, group: 0 }, { term: 'timeout', weight: 3, group: 1 }], 0), undefined);
  });

  test('proximityWeight lifts the section with the words together; 0 turns it off', () => {
    const snippets = [
      { id: 1, type: 'info' as const, title: 'A', description: '', code: '', content: far, breadcrumb: ['Guide', 'Alpha'], pageTitle: 'Guide', sourcePath: 'a.md', tokens: 40 },
      { id: 2, type: 'info' as const, title: 'B', description: '', code: '', content: near, breadcrumb: ['Guide', 'Beta'], pageTitle: 'Guide', sourcePath: 'b.md', tokens: 40 },
    ];
    const q = 'retry timeout';
    const off = buildLexicalIndex(snippets, { ...DEFAULT_BM25, parentWeight: 0, neighbourWeight: 0, proximityWeight: 0 }).search(q, 5);
    const on = buildLexicalIndex(snippets, { ...DEFAULT_BM25, parentWeight: 0, neighbourWeight: 0, proximityWeight: 1 }).search(q, 5);
    const gap = (r: typeof on) => r.find((x) => x.id === 2)!.score - r.find((x) => x.id === 1)!.score;
    assert.ok(gap(on) > gap(off) + 0.1);
  });
});
