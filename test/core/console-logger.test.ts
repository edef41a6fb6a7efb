import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createConsoleLogger, formatTextLogLine, redactSecrets } from '../../core/services.ts';

describe('createConsoleLogger', () => {
  test('json (the default): one JSON object a line with the fields', () => {
    const lines: string[] = [];
    const logger = createConsoleLogger('info', (l) => lines.push(l));
    logger.debug('hidden');
    logger.warn('careful', { job: 'j1', n: 2 });
    assert.equal(lines.length, 1);
    const j = JSON.parse(lines[0]);
    assert.equal(j.level, 'warn');
    assert.equal(j.message, 'careful');
    assert.equal(j.job, 'j1');
    assert.equal(j.n, 2);
    assert.match(j.at, /^\d{4}-\d\d-\d\dT/);
  });

  test('text: the level as a word, the message, the fields as key=value, omitted fields left out', () => {
    const lines: string[] = [];
    const logger = createConsoleLogger('debug', (l) => lines.push(l), { format: 'text', omitFields: ['job'] });
    logger.warn('careful', { job: 'j1', file: 'a b.md', n: 2, list: [1] });
    logger.info('plain');
    logger.error('failed', { stack: 'Error: x\n    at f (file.ts:1:1)' });
    assert.deepEqual(lines, ['warning: careful (file="a b.md", n=2, list=[1])', 'plain', 'error: failed\nError: x\n    at f (file.ts:1:1)']);
  });

  test('formatTextLogLine without fields', () => {
    assert.equal(formatTextLogLine('debug', 'x'), 'debug: x');
  });
});

describe('redactSecrets', () => {
  test('secret-named environment values, URL credentials, bearer tokens and API keys', () => {
    const env = { REFDESK_GIT_TOKEN: 'ghp_PLANTED123', CONFLUENCE_PAT: 'pat-PLANTED', HOME: '/root', SHORT_TOKEN: 'abc' };
    const text =
      'clone of https://user:ghp_PLANTED123@github.com/x failed; auth Bearer eyJ.PLANTED.sig; key rdk_PLANTEDkey; pat pat-PLANTED; home /root; abc';
    const out = redactSecrets(text, env);
    assert.doesNotMatch(out, /PLANTED/);
    assert.match(out, /https:\/\/\[redacted\]@github\.com\/x/);
    assert.match(out, /Bearer \[redacted\]/);
    assert.match(out, /rdk_\*\*\*/);
    assert.match(out, /home \/root; abc$/, 'values of other variables and short values stay');
  });
});

describe('LogRing (the server log kept for the support bundle)', async () => {
  const { LogRing } = await import('../../core/services.ts');
  test('keeps the last lines written, oldest first, already redacted', () => {
    const ring = new LogRing(3);
    const logger = createConsoleLogger('info', () => {}, { ring });
    logger.debug('below the level: not kept');
    for (let i = 1; i <= 5; i++) logger.info(`line ${i}`, i === 5 ? { header: 'Authorization: Bearer sk-planted-ring-secret-1234' } : {});
    const lines = ring.lines();
    assert.deepEqual(lines.map((l) => JSON.parse(l).message), ['line 3', 'line 4', 'line 5']);
    assert.ok(!lines.join('\n').includes('sk-planted-ring-secret-1234'));
  });

  test('fewer lines than its capacity: all of them in order', () => {
    const ring = new LogRing(10);
    ring.push('a');
    ring.push('b');
    assert.deepEqual(ring.lines(), ['a', 'b']);
    assert.throws(() => new LogRing(0), RangeError);
  });
});
