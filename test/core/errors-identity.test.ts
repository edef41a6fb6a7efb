/**
 * RefdeskError across copies of core/errors.ts: the compiled server is a bundle, and a plugin
 * given by path may import the package's compiled core (another copy of the module). Its errors
 * must still be recognised (their code and status reach the client as a 4xx, not a 500).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, RefdeskError, isRefdeskError } from '../../core/errors.ts';

test('an error of another copy of core/errors.ts is a RefdeskError; subclasses and plain errors stay apart', async () => {
  // A query string makes Node load the module a second time: a copy with classes of its own.
  const copy = (await import(new URL('../../core/errors.ts?another-copy', import.meta.url).href)) as typeof import('../../core/errors.ts');
  assert.notEqual(copy.RefdeskError, RefdeskError, 'a second copy of the module');
  const theirs = new copy.RefdeskError('invalid_request', 'bad input');
  assert.ok(theirs instanceof RefdeskError);
  assert.ok(isRefdeskError(theirs));
  assert.ok(isRefdeskError(new copy.ConfigError('bad config')), 'a subclass of the copy is a RefdeskError');
  assert.equal(theirs.status, 400);
  assert.ok(!(new copy.ConfigError('x') instanceof ConfigError), 'subclasses compare as classes');
  assert.ok(!(new RefdeskError('not_found', 'x') instanceof ConfigError));
  assert.ok(new ConfigError('x') instanceof RefdeskError);
  assert.ok(!(new Error('plain') instanceof RefdeskError));
  assert.ok(!isRefdeskError({ code: 'invalid_request', status: 400, message: 'lookalike' }));
  assert.ok(!isRefdeskError(null));
});
