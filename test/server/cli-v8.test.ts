/** `refdesk add`'s V8 settings for its own run (server/cli-v8.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADD_INTERRUPT_BUDGET, addRunV8Flags } from '../../server/cli-v8.ts';

test('refdesk add raises V8\'s interrupt budget, unless node was started with one', () => {
  assert.ok(ADD_INTERRUPT_BUDGET > 67_584, 'above V8\'s default');
  assert.deepEqual(addRunV8Flags([]), [`--interrupt-budget=${ADD_INTERRUPT_BUDGET}`]);
  assert.deepEqual(addRunV8Flags(['--enable-source-maps']), [`--interrupt-budget=${ADD_INTERRUPT_BUDGET}`]);
  assert.deepEqual(addRunV8Flags(['--interrupt-budget=50000']), [], 'the user\'s own value stays');
  assert.deepEqual(addRunV8Flags(['--interrupt_budget', '50000']), []);
});
