import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredSnippet } from '../../../core/contracts.ts';
import { buildLexicalIndex, DEFAULT_BM25, type Bm25Params } from '../../../core/search/lexical-index.ts';
import { infoSnippet as snip } from '../../helpers/info-snippet.ts';

function codeSnippet(sourcePath: string, breadcrumb: string[], code: string): StoredSnippet {
  return { ...snip(sourcePath, breadcrumb, ''), type: 'code', language: 'js', code, tokens: Math.ceil(code.length / 4) };
}

describe('code-example prior', () => {
  // Two sections that match alike (same heading, same prose); only the second holds an example.
  const docs = [
    snip('docs/alpha.md', ['Retrying uploads'], 'Failed uploads can be retried after a pause.'),
    snip('docs/beta.md', ['Retrying uploads'], 'Failed uploads can be retried after a pause.'),
    codeSnippet('docs/beta.md', ['Retrying uploads'], 'queue.push(job, { attempts: 3 })'),
    snip('docs/gamma.md', ['Logging'], 'Write the log to a file.'),
  ];
  const first = (params: Bm25Params, question: string) => {
    const hits = buildLexicalIndex(docs, params).search(question, 10);
    return { path: docs.find((d) => d.id === hits[0].id)!.sourcePath, hits };
  };
  const howTo = 'How do I retry failed uploads?';

  test('for a how-to question, the section with a code example comes first, its score x (1 + codePrior)', () => {
    assert.ok(DEFAULT_BM25.codePrior > 0 && DEFAULT_BM25.codePriorHowTo);
    const { path, hits } = first(DEFAULT_BM25, howTo);
    assert.equal(path, 'docs/beta.md');
    const alpha = hits.find((h) => h.id === docs[0].id)!;
    assert.ok(Math.abs(hits[0].score / alpha.score - (1 + DEFAULT_BM25.codePrior)) < 1e-9);
  });

  test('a question that does not ask how to do something gets no code prior (codePriorHowTo)', () => {
    assert.equal(first(DEFAULT_BM25, 'retry failed uploads').path, 'docs/alpha.md');
    assert.equal(first(DEFAULT_BM25, 'Why do failed uploads retry?').path, 'docs/alpha.md');
    assert.equal(first({ ...DEFAULT_BM25, codePriorHowTo: false }, 'retry failed uploads').path, 'docs/beta.md');
  });

  test('codePrior 0 turns it off: sections matching alike keep their order', () => {
    const { path, hits } = first({ ...DEFAULT_BM25, codePrior: 0 }, howTo);
    assert.equal(path, 'docs/alpha.md');
    assert.equal(hits.find((h) => h.id === docs[1].id)!.score, hits[0].score);
  });
});
