import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, RefdeskError, isRefdeskError } from '../../core/errors.ts';

test('a RefdeskError from another copy of core/errors.ts (a plugin built against refdesk/core) is still a RefdeskError', async () => {
  // A second module instance, as a plugin package's own compiled copy of refdesk/core would be.
  const copy = (await import(`../../core/errors.ts?copy=${Date.now()}`)) as typeof import('../../core/errors.ts');
  assert.notEqual(copy.RefdeskError, RefdeskError, 'the test needs a distinct class');
  const foreign = new copy.RefdeskError('invalid_source', 'the plugin refused');
  assert.ok(foreign instanceof RefdeskError);
  assert.ok(isRefdeskError(foreign));
  assert.equal(foreign.status, 400);
  assert.ok(new copy.ConfigError('bad') instanceof RefdeskError);
});

test('subclasses keep their own instanceof; plain errors are not RefdeskErrors', () => {
  assert.ok(new ConfigError('x') instanceof ConfigError);
  assert.ok(new ConfigError('x') instanceof RefdeskError);
  assert.ok(!(new RefdeskError('not_found', 'x') instanceof ConfigError));
  assert.ok(!(new Error('x') instanceof RefdeskError));
  assert.ok(!isRefdeskError({ code: 'not_found', status: 404, message: 'x' }));
  assert.ok(!isRefdeskError(null));
});
