import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { infoSnippet as snip } from '../../helpers/info-snippet.ts';
import { buildLexicalIndex, DEFAULT_BM25 } from '../../../core/search/lexical-index.ts';
import { PhraseMatcher, questionPhrases } from '../../../core/search/phrases.ts';

const longestRun = (phrase: string[], text: string[]) => new PhraseMatcher(phrase).longestRun(text);

describe('verbatim phrases of a question', () => {
  test('quoted text in double, curly, single quotes and backticks; contractions are not quotes', () => {
    assert.deepEqual(
      questionPhrases(`It doesn't work: I get "Body is unusable", then “stream already read” and 'port in use', and \`app.listen(3000)\` isn't called.`),
      ['Body is unusable', 'stream already read', 'port in use', 'app.listen(3000)'],
    );
  });

  test('an error message without quotes runs to the end of its clause; one already quoted is not repeated', () => {
    assert.deepEqual(questionPhrases('Calling json() throws TypeError: Body is unusable. Why?'), ['TypeError: Body is unusable']);
    assert.deepEqual(questionPhrases(`I get 'Uncaught Error: Maximum update depth exceeded'.`), ['Uncaught Error: Maximum update depth exceeded']);
  });

  test('minWords drops lone names: a code name between backticks is a term, not a phrase', () => {
    assert.deepEqual(questionPhrases('Why is `currentUser` undefined after "the hook runs twice"?', 3), ['the hook runs twice']);
  });

  test('longestRun: the longest run of consecutive phrase tokens found consecutive in the text', () => {
    assert.equal(longestRun(['maximum', 'update', 'depth', 'exceed'], ['i', 'get', 'maximum', 'update', 'depth', 'exceed', 'when']), 4);
    assert.equal(longestRun(['uncaught', 'error', 'maximum', 'update', 'depth'], ['maximum', 'depth', 'update', 'error', 'maximum', 'update']), 3); // error maximum update
    assert.equal(longestRun(['a', 'a', 'b'], ['a', 'a', 'a', 'b']), 3);
    assert.equal(longestRun(['x', 'y'], ['y', 'x']), 1);
    assert.equal(longestRun([], ['x']), 0);
    // One matcher serves many texts (the index reuses it over sections): no state carries over.
    const m = new PhraseMatcher(['update', 'depth', 'exceed']);
    assert.equal(m.longestRun(['update', 'depth']), 2);
    assert.equal(m.longestRun(['exceed', 'x']), 1);
  });
});

describe('verbatim phrase boost in the lexical index', () => {
  const docs = [
    // Matches the question's other words often: wins on words alone.
    snip('docs/guide/tutorial.md', ['Tutorial', 'The game store'], 'The game store holds the squares. Read squares and setSquares from the game store with a selector.'),
    // Names the pasted error word for word in its heading.
    snip('docs/reference/selectors.md', ['Selectors', 'Troubleshooting', 'I get "Maximum update depth exceeded" when selecting'], 'Return a stable value from the selector, or use shallow comparison.'),
    snip('docs/reference/other.md', ['Other'], 'Depth of the update queue; the maximum is configurable.'),
  ];
  const question = "My game store selector reads squares and setSquares, and I get 'Uncaught Error: Maximum update depth exceeded'.";
  const firstPath = (phraseWeight: number) => {
    const index = buildLexicalIndex(docs, { ...DEFAULT_BM25, phraseWeight });
    return docs.find((d) => d.id === index.search(question, 10)[0].id)!.sourcePath;
  };

  test('a section holding most of a pasted error message word for word comes first', () => {
    assert.equal(firstPath(1), 'docs/reference/selectors.md');
  });

  test('phraseWeight 0 turns it off: the words alone rank the tutorial first', () => {
    assert.equal(firstPath(0), 'docs/guide/tutorial.md');
  });

  test('the same words scattered (no run of three) earn nothing', () => {
    const index = buildLexicalIndex(docs, { ...DEFAULT_BM25, phraseWeight: 1 });
    const off = buildLexicalIndex(docs, { ...DEFAULT_BM25, phraseWeight: 0 });
    const score = (ix: typeof index) => ix.search(question, 10).find((h) => h.id === docs[2].id)?.score;
    assert.equal(score(index), score(off));
  });
});
