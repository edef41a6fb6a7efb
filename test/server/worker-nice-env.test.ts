/**
 * REFDESK_WORKER_NICE: the priority of a server's ingest worker threads (core/worker-task.ts);
 * a bad value stops the start with a message that says what to write.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readWorkerNice } from '../../server/env.ts';
import { SERVER_WORKER_NICE } from '../../core/worker-task.ts';

test('REFDESK_WORKER_NICE: unset gives the server default, 0 - 19 are taken, anything else is a config error', () => {
  assert.equal(readWorkerNice({}, SERVER_WORKER_NICE), 10);
  assert.equal(readWorkerNice({ REFDESK_WORKER_NICE: ' ' }, SERVER_WORKER_NICE), 10);
  assert.equal(readWorkerNice({ REFDESK_WORKER_NICE: '0' }, SERVER_WORKER_NICE), 0);
  assert.equal(readWorkerNice({ REFDESK_WORKER_NICE: '19' }, SERVER_WORKER_NICE), 19);
  for (const bad of ['20', '-1', '5.5', 'low', '100']) {
    assert.throws(() => readWorkerNice({ REFDESK_WORKER_NICE: bad }, SERVER_WORKER_NICE), (e: Error & { code?: string }) => e.code === 'config_error' && /REFDESK_WORKER_NICE must be a whole number from 0/.test(e.message), bad);
  }
});
