import assert from 'node:assert/strict';
import { RefdeskError, type ErrorCode } from '../../core/errors.ts';

/** The RefdeskError a promise rejects with (fails the test if it resolves or rejects otherwise). */
export async function rejection(p: Promise<unknown>): Promise<RefdeskError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof RefdeskError, `expected a RefdeskError, got ${e instanceof Error ? e.stack : String(e)}`);
    return e;
  }
  assert.fail('expected a rejection, but the promise resolved');
}

/** Asserts a RefdeskError with this code whose message contains every given fragment and no stack trace. */
export async function rejectsWith(p: Promise<unknown>, code: ErrorCode, fragments: string[] = []): Promise<RefdeskError> {
  const caught = await rejection(p);
  assert.equal(caught.code, code, caught.message);
  for (const f of fragments) assert.ok(caught.message.includes(f), `message ${JSON.stringify(caught.message)} lacks ${JSON.stringify(f)}`);
  assert.ok(!caught.message.includes('\n    at '), 'message must not carry a stack trace');
  return caught;
}
