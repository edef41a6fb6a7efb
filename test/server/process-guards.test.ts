import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { ignoreBrokenStdio, installProcessGuards } from '../../server/process-guards.ts';
import { Writable } from 'node:stream';
import { createConsoleLogger } from '../../core/services.ts';

describe('the server process guards', () => {
  test('an unhandled rejection is logged redacted and the process goes on; an uncaught exception asks for shutdown', () => {
    const proc = new EventEmitter();
    const lines: string[] = [];
    const logger = createConsoleLogger('info', (l) => lines.push(l));
    const fatal: unknown[] = [];
    process.env.REFDESK_GUARD_TEST_TOKEN = 'tok-PLANTED-SECRET';
    const guards = installProcessGuards(proc, logger, (e) => fatal.push(e));
    try {
      proc.emit('unhandledRejection', new Error('request to https://u:tok-PLANTED-SECRET@example.com failed'), Promise.resolve());
      proc.emit('unhandledRejection', { weird: 'Bearer PLANTEDtoken' }, Promise.resolve());
      assert.equal(fatal.length, 0, 'a rejection does not stop the server');
      proc.emit('uncaughtException', new TypeError('boom'));
      assert.equal(fatal.length, 1);
    } finally {
      guards.remove();
      delete process.env.REFDESK_GUARD_TEST_TOKEN;
    }
    assert.equal(proc.listenerCount('unhandledRejection'), 0);
    const logged = lines.map((l) => JSON.parse(l));
    assert.equal(logged.length, 3);
    assert.ok(logged.every((l) => l.level === 'error'));
    assert.match(logged[0].message, /unhandled promise rejection.*keeps serving/);
    assert.equal(logged[0].error, 'Error: request to https://[redacted]@example.com failed');
    assert.match(logged[0].stack, /^Error: request to https:\/\/\[redacted\]@example\.com failed\n\s+at /);
    assert.equal(logged[1].error, '{"weird":"Bearer [redacted]"}');
    assert.match(logged[2].message, /uncaught exception.*shuts down/);
    assert.doesNotMatch(lines.join('\n'), /PLANTED/);
  });
});

test('a stdout or stderr whose reader went away (EPIPE) is not an uncaught exception', async () => {
  const broken = new Writable({
    write(_chunk, _enc, cb) {
      cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    },
  });
  ignoreBrokenStdio([broken]);
  broken.write('a log line\n');
  broken.write('another\n');
  await new Promise((r) => setImmediate(r));
  assert.ok(broken.listenerCount('error') > 0);
});
