import assert from 'node:assert/strict';
import { RefdeskError, type ErrorCode } from '../../core/errors.ts';

/** Asserts a RefdeskError with this code whose message contains every given fragment and no stack trace. */
export async function rejectsWith(p: Promise<unknown>, code: ErrorCode, fragments: string[] = []): Promise<RefdeskError> {
  let caught: unknown;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof RefdeskError, `expected a RefdeskError(${code}), got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  for (const f of fragments) assert.ok(caught.message.includes(f), `message ${JSON.stringify(caught.message)} lacks ${JSON.stringify(f)}`);
  assert.ok(!caught.message.includes('\n    at '), 'message must not carry a stack trace');
  return caught;
}
