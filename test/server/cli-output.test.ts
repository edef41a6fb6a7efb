/**
 * The CLI's terminal output: on a (fake) terminal, warnings go above the progress line and never
 * share a row with it; off a terminal lines are printed whole; the summary of skipped files.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StatusLine, WarningSummary, fitWidth } from '../../server/cli-output.ts';
import { createConsoleLogger } from '../../core/services.ts';
import { terminalRows } from '../helpers/terminal-rows.ts';

/**
 * A minimal terminal: keeps the rows a person would see, interpreting \r, \n and ESC[K (erase to
 * the end of the row). Anything else escaped fails the test.
 */
class FakeTerminal {
  readonly isTTY = true;
  raw = '';
  constructor(readonly columns: number) {}
  write(chunk: string): boolean {
    this.raw += chunk;
    return true;
  }
  screen(): string[] {
    return terminalRows(this.raw, { strict: true, columns: this.columns });
  }
}

class Pipe {
  readonly isTTY = false;
  raw = '';
  write(chunk: string): boolean {
    this.raw += chunk;
    return true;
  }
}

const progress = (files: number) => `  ${files} files, ${files * 10} snippets, 0.${files} s`;

describe('StatusLine on a terminal', () => {
  test('a warning between progress updates lands on its own row above the progress line', () => {
    const term = new FakeTerminal(60);
    const status = new StatusLine(term);
    const logger = createConsoleLogger('warn', (l) => status.print(l), { format: 'text', omitFields: ['job', 'library'] });
    status.update(progress(1));
    status.update(progress(2));
    logger.warn('docs/a.md: an include directive was left as written: "../src/a.py" is not a file of the upload', { job: 'j1', library: '/docs/x' });
    status.update(progress(3));
    logger.warn('Skipped symlink b.md: it points outside the upload folder', { job: 'j1', library: '/docs/x' });
    logger.info('not shown: below the level');
    status.update(progress(4));
    status.done();
    assert.deepEqual(term.screen(), [
      'warning: docs/a.md: an include directive was left as writt…',
      'warning: Skipped symlink b.md: it points outside the uploa…',
      progress(4),
      '',
    ]);
    assert.doesNotMatch(term.raw, /"level"|"job"|j1/, 'no JSON and no job fields on a terminal');
  });

  test('JSON lines (LOG_FORMAT=json on a terminal) are printed whole, still above the progress line', () => {
    const term = new FakeTerminal(1000);
    const status = new StatusLine(term);
    const logger = createConsoleLogger('warn', (l) => status.print(l, false), { format: 'json' });
    status.update(progress(1));
    logger.warn('x'.repeat(300), { job: 'j1' });
    status.update(progress(2));
    status.done();
    const rows = term.screen();
    assert.equal(rows.length, 3);
    assert.deepEqual(JSON.parse(rows[0]).message, 'x'.repeat(300));
    assert.equal(rows[1], progress(2));
  });

  test('a progress line wider than the terminal is cut, so redrawing it never leaves a wrapped row', () => {
    const term = new FakeTerminal(30);
    const status = new StatusLine(term);
    status.update('  ' + 'y'.repeat(80));
    status.print('a message');
    status.update('  short');
    status.done();
    assert.deepEqual(term.screen(), ['a message', '  short', '']);
  });

  test('fitWidth keeps short lines and the first line of a multi-line message', () => {
    assert.equal(fitWidth('short', 80), 'short');
    assert.equal(fitWidth('first\nsecond', 80), 'first');
    assert.equal(fitWidth('z'.repeat(50), 30), 'z'.repeat(28) + '…');
  });
});

describe('StatusLine off a terminal', () => {
  test('messages are printed whole, progress as plain lines at most every interval', () => {
    const pipe = new Pipe();
    const status = new StatusLine(pipe, 60_000);
    status.update(progress(1));
    status.update(progress(2)); // within the interval: not printed
    status.print('{"level":"warn","message":"' + 'w'.repeat(200) + '"}');
    status.done();
    assert.equal(pipe.raw, `${progress(1)}\n{"level":"warn","message":"${'w'.repeat(200)}"}\n`);
    assert.doesNotMatch(pipe.raw, /\r|\x1b/);
  });
});

describe('WarningSummary', () => {
  test('skipped files by reason with the first names, include directives, other warnings', () => {
    const s = new WarningSummary(2);
    s.add('warn', 'Skipped big1.md: 3000000 bytes is over the per-file limit maxFileBytes=2097152');
    s.add('warn', 'Skipped big2.md: more than 5000000 bytes is over the per-file limit maxFileBytes=2097152');
    s.add('warn', 'Skipped big3.md: 4000000 bytes is over the per-file limit maxFileBytes=2097152');
    s.add('warn', 'Skipped symlink link.md: it points outside the upload folder');
    s.add('warn', 'skipped a/x.md: the chunker failed (boom)');
    s.add('warn', 'docs/one.md: an include directive was left as written: "../x.py" is not a file of the upload');
    s.add('warn', 'docs/two.md: 4 include directives were left as written: "../y.py" is not a file of the upload');
    s.add('warn', 'retrying (attempt 2 of 3) in 1000 ms: HTTP 503');
    s.add('info', 'Skipped nothing.md: info lines do not count');
    assert.deepEqual(s.lines(), [
      'Skipped 5 files:',
      '  3 over the per-file size limit: big1.md, big2.md and 1 more',
      '  1 symlink out of the folder: link.md',
      '  1 chunker failed: a/x.md',
      '2 files with include directives left as written (targets not in the source): docs/one.md, docs/two.md',
      '1 other warning (above).',
    ]);
  });

  test('nothing to say when there was no warning', () => {
    assert.deepEqual(new WarningSummary().lines(), []);
  });
});
