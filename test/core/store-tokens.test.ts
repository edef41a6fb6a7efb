import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newContainer, resolveDeps } from '../../core/di.ts';
import { registerStore, StoreTokens, Tokens } from '../../core/di-tokens.ts';
import { MemoryStore } from '../../core/testing/memory-store.ts';

test('registerStore provides the store under Tokens.Store and every role token', () => {
  const container = newContainer();
  const store = new MemoryStore();
  registerStore(container, store);
  const deps = resolveDeps(container.createChildContainer(), { store: Tokens.Store, ...StoreTokens }, 'test');
  assert.deepEqual(Object.keys(deps).sort(), ['apiKeys', 'audit', 'builds', 'catalog', 'jobs', 'sessions', 'settings', 'store']);
  for (const value of Object.values(deps)) assert.equal(value, store);
});

test('a definition that needs one role and finds no store gets the dependency error', () => {
  assert.throws(() => resolveDeps(newContainer(), { jobs: StoreTokens.jobs }, 'plugin x'), /plugin x: dependency "jobs" \(refdesk:core\.store\.jobs\) is not provided/);
});
