import { test } from 'node:test';
import assert from 'node:assert/strict';
import { token } from '../../core/di.ts';

test('tokens with the same name are the same symbol', () => {
  assert.equal(token<number>('a.b'), token<number>('a.b'));
});
