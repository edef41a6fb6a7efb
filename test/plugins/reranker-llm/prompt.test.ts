import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPrompt, parseRanking } from '../../../plugins/reranker-llm/prompt.ts';

test('parseRanking: the strict answer, a fenced one; anything else is refused whole', () => {
  assert.deepEqual(parseRanking('{"ranking":[3,1]}', 3), [2, 0]);
  assert.deepEqual(parseRanking('```json\n{"ranking": [2]}\n```', 3), [1]);
  assert.deepEqual(parseRanking('{"ranking":[]}', 3), []);
  for (const bad of ['', 'The best is 2', '[1,2]', '{"ranking":"1,2"}', '{"ranking":[4]}', '{"ranking":[0]}', '{"ranking":[1,1]}', '{"ranking":[1.5]}', '{"order":[1]}', '{"ranking":[1,2', 'null']) {
    assert.equal(parseRanking(bad, 3), null, bad);
  }
});

test('buildPrompt: every candidate numbered, the list within the token budget however long the texts', () => {
  const items = Array.from({ length: 30 }, (_, i) => ({ title: `Title ${i} `.repeat(30), where: 'A > B > C', text: 'word '.repeat(5000) }));
  const prompt = buildPrompt('Question: q', items, 2500, 400);
  for (let i = 1; i <= 30; i++) assert.ok(prompt.includes(`[${i}] `), String(i));
  assert.ok(prompt.length / 4 <= 2500 + 50, `about ${Math.round(prompt.length / 4)} tokens`);
  const short = buildPrompt('Question: q', items.slice(0, 2), 2500, 400);
  assert.ok(short.split('\n').filter((l) => l.startsWith('    ')).every((l) => l.trim().length <= 400));
});
