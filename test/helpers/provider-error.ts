import assert from 'node:assert/strict';
import type { ProviderError } from '../../core/providers.ts';

/** The ProviderError a promise rejects with; fails when it resolves, rejects otherwise, or names `secret`. */
export async function providerError(p: Promise<unknown>, secret: string): Promise<ProviderError> {
  try {
    await p;
  } catch (e) {
    assert.equal((e as Error).name, 'ProviderError', String(e));
    assert.ok(!String((e as Error).message).includes(secret), 'the key is not in the message');
    return e as ProviderError;
  }
  assert.fail('expected a ProviderError');
}
