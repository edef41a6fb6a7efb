import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_BRIDGE, HeadingBridge, type BridgeOptions } from '../../../core/search/bridge.ts';
import { computeIndexData } from '../../../core/search/index-data.ts';
import { buildLexicalIndex, DEFAULT_BM25, termNumber } from '../../../core/search/lexical-index.ts';
import { infoSnippet as snip } from '../../helpers/info-snippet.ts';

/** A small reference page: entries titled with their names, described in plain words. */
const docs = [
  snip('library/subprocess.md', ['subprocess', 'subprocess.check_output'], 'Run a command with arguments and capture its output as bytes.'),
  snip('library/subprocess.md', ['subprocess', 'subprocess.run'], 'Run the command described by args. Set capture_output to capture the output of the child.'),
  snip('library/subprocess.md', ['subprocess', 'subprocess.call'], 'Run the command described by args and wait for it to finish.'),
  snip('library/shutil.md', ['shutil', 'shutil.copyfile'], 'Copy the contents of a file to another file.'),
  snip('library/shutil.md', ['shutil', 'shutil.rmtree'], 'Delete an entire directory tree.'),
  snip('library/urllib.md', ['urllib', 'urllib.request.urlretrieve'], 'Copy a network object denoted by a URL to a local file (download it).'),
  snip('library/logging.md', ['logging', 'Handlers'], 'A handler sends log records to a destination such as a stream or a file.'),
  snip('library/logging.md', ['logging', 'Formatters'], 'A formatter turns a log record into text.'),
  snip('library/io.md', ['io', 'Text streams'], 'Read text from a stream, line by line.'),
  snip('library/io.md', ['io', 'Binary streams'], 'Read and write bytes.'),
  snip('tutorial/output.md', ['Output', 'Printing output'], 'Output is printed to the terminal. Capture the output of a program by redirecting it.'),
  snip('tutorial/output.md', ['Output', 'Output formatting'], 'Format the output with f-strings; the output of print ends with a newline.'),
  snip('tutorial/shell.md', ['Shell', 'Capturing what a command writes'], 'In the shell, redirect what a command writes to a file to capture it.'),
];

function mined(options: Partial<BridgeOptions>) {
  const data = computeIndexData(docs, DEFAULT_BM25);
  const bridge = new HeadingBridge({ postings: data.bm25, head: data.head }, data.terms, { ...DEFAULT_BRIDGE, ...options });
  return (word: string) => {
    const no = termNumber(data.terms, word);
    return no < 0 ? [] : bridge.associates(no).map((a) => ({ t: data.terms[a.no], s: Number(a.s.toFixed(3)) }));
  };
}

describe('vocabulary bridging mined from the corpus (core/search/bridge.ts)', () => {
  test('a word of entries\u2019 descriptions is associated with the words of their headings', () => {
    const of = mined({ minCount: 2, minLift: 2, maxShare: 0.5, maxAssociates: 10 });
    const captur = of('captur');
    // "capture" is in four sections: check_output's, run's and two tutorial sections. Two of
    // them have "subprocess" in their heading, two "output" (check_output and Printing output).
    assert.deepEqual(
      captur.map((a) => a.t),
      ['output', 'subprocess'],
    );
    assert.ok(captur[0].s > 0 && captur[0].s <= 1);
  });

  test('minCount: a heading word seen once beside the word is evidence only when minCount is 1', () => {
    const of = mined({ minCount: 1, minLift: 2, maxShare: 0.5, maxAssociates: 20 });
    const names = of('captur').map((a) => a.t);
    for (const t of ['subprocess.check_output', 'check_output', 'subprocess.run', 'print']) assert.ok(names.includes(t), `${t} missing from ${names}`);
  });

  test('namesOnly keeps code names (dotted, snake_case) and drops plain heading words', () => {
    const of = mined({ minCount: 1, minLift: 2, maxShare: 0.5, maxAssociates: 20, namesOnly: true });
    const names = of('captur').map((a) => a.t);
    assert.ok(names.includes('check_output') && names.includes('subprocess.check_output'));
    assert.ok(!names.includes('subprocess') && !names.includes('print') && !names.includes('output'));
  });

  test('a word in too many sections (maxShare) or below the lift gets no associates', () => {
    assert.deepEqual(mined({ minCount: 1, minLift: 2, maxShare: 0.2 })('captur'), []); // 4 of 13 sections
    assert.deepEqual(mined({ minCount: 1, minLift: 100, maxShare: 0.5 })('captur'), []);
  });

  test('associates are strongest-evidence first, at most maxAssociates, the same on every call (cached)', () => {
    const of = mined({ minCount: 1, minLift: 2, maxShare: 0.5, maxAssociates: 2 });
    const a = of('captur');
    assert.equal(a.length, 2);
    assert.deepEqual(of('captur'), a);
  });
});

describe('bridging as query expansion (bridgeWeight)', () => {
  const params = { ...DEFAULT_BM25, bridgeWeight: 0.5, bridge: { ...DEFAULT_BRIDGE, minCount: 1, minLift: 2, maxShare: 0.5, namesOnly: true } };
  const firstPath = (p: typeof params, q: string) => {
    const hits = buildLexicalIndex(docs, p).search(q, 10);
    return docs.find((d) => d.id === hits[0].id)!.sourcePath;
  };
  // The question says what check_output's description says, not its name; the shell tutorial
  // has "capture" and "command" in its heading.
  const question = "capture a command's bytes";

  test('off (bridgeWeight 0, the default), the tutorial whose heading has the words comes first', () => {
    assert.equal(DEFAULT_BM25.bridgeWeight, 0);
    assert.equal(firstPath({ ...params, bridgeWeight: 0 }, question), 'tutorial/shell.md');
  });

  test('on, the question in the description\u2019s words reaches the entries by their mined names', () => {
    assert.equal(firstPath(params, question), 'library/subprocess.md');
  });
});
