/**
 * A tiny synthetic benchmark: two corpora (alpha, beta) with a manifest, and four questions
 * (one of type none), for the harness tests.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** Writes the corpora and questions under `dir`; returns their paths. */
export function writeTinyBench(dir: string): { corpora: string; questions: string } {
  const corpora = join(dir, 'corpora');
  write(
    join(corpora, 'MANIFEST.json'),
    JSON.stringify({ corpora: [{ name: 'alpha', libraryId: '/acme/alpha', bytes: 0 }, { name: 'beta', libraryId: '/acme/beta', bytes: 0 }] }),
  );
  write(
    join(corpora, 'alpha', 'docs', 'guide.md'),
    [
      '# Alpha guide', // 1
      '', // 2
      'Alpha is a tiny framework for examples.', // 3
      '', // 4
      '## Frobnicate widgets', // 5
      '', // 6
      'Call `frobnicateWidget()` to frobnicate a widget quickly.', // 7
      '', // 8
      '```js', // 9
      'frobnicateWidget({ speed: 3 })', // 10
      '```', // 11
      '', // 12
      '## Install', // 13
      '', // 14
      'Run the installer with npm to install alpha.', // 15
      '',
    ].join('\n'),
  );
  write(join(corpora, 'alpha', 'docs', 'faq.md'), '# FAQ\n\nAnswers about the zebra crossing and the lighthouse keeper.\n');
  write(join(corpora, 'beta', 'README.md'), '# Beta\n\nBeta renders quaternion matrices for games.\n\n## Rotation\n\nUse slerp to rotate a quaternion smoothly.\n');
  const questions = join(dir, 'questions.jsonl');
  const q = (o: object) => JSON.stringify(o);
  write(
    questions,
    [
      q({ id: 'a-1', library: '/acme/alpha', corpus: 'alpha', question: 'how do I frobnicate a widget?', type: 'howto', gold: [{ path: 'docs/guide.md', lines: [5, 12], grade: 2 }] }),
      q({ id: 'a-2', library: '/acme/alpha', corpus: 'alpha', question: 'zebra lighthouse keeper', type: 'concept', gold: [{ path: 'docs/faq.md', grade: 2 }] }),
      q({ id: 'a-3', library: '/acme/alpha', corpus: 'alpha', question: 'how do I deploy to kubernetes', type: 'none', gold: [] }),
      q({ id: 'b-1', library: '/acme/beta', corpus: 'beta', question: 'rotate a quaternion with slerp', type: 'api', gold: [{ path: 'README.md', lines: [5, 7], grade: 2 }] }),
    ].join('\n') + '\n',
  );
  return { corpora, questions };
}
