/**
 * What the role suites of the Store contract share: the fixture shape, sample data and helpers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BuildStore, LibraryInput, Snippet, Store, StoredSnippet } from '../../contracts.ts';

/**
 * A fresh, empty, open store for one test. `cleanup` releases it and its data, and must also
 * work when the test has already closed the store. `S` is what the suite needs of the store:
 * one role, or the roles it reads together (core/contracts.ts).
 */
export interface StoreFixture<S = Store> {
  store: S;
  cleanup(): Promise<void>;
}

export type MakeStore<S> = () => Promise<StoreFixture<S>>;

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A snippet with every field set; override what the test cares about. */
export function sampleSnippet(overrides: Partial<Snippet> = {}): Snippet {
  return {
    type: 'info',
    title: 'Section',
    description: '',
    language: '',
    code: '',
    content: 'Some prose about the library.',
    breadcrumb: ['Guide', 'Section'],
    pageTitle: 'Guide',
    sourcePath: 'docs/guide.md',
    lineStart: 1,
    lineEnd: 3,
    tokens: 10,
    ...overrides,
  };
}

export function lib(id: string, overrides: Partial<LibraryInput> = {}): LibraryInput {
  return { id, title: `Title of ${id}`, source: { kind: 'upload', spec: { name: id } }, ...overrides };
}

/** Builds and finalizes a version with these snippets; returns the build id. */
export async function buildVersion(store: BuildStore, libraryId: string, version: string, snippets: Snippet[], jobId: string | null = null): Promise<string> {
  const buildId = await store.beginBuild(libraryId, version, jobId);
  await store.addSnippets(buildId, snippets);
  await store.finalizeBuild(buildId);
  return buildId;
}

export function contents(snippets: StoredSnippet[]): string[] {
  return snippets.map((s) => s.content);
}

export function errorCode(code: string): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.equal((err as { code?: unknown }).code, code, `expected error code ${code}, got ${String((err as Error)?.message ?? err)}`);
    assert.ok(typeof (err as Error).message === 'string' && (err as Error).message.length > 0);
    return true;
  };
}

/**
 * `storeTest(title, fn)` runs `fn` on a fresh store from `makeStore` and cleans it up after,
 * pass or fail.
 */
export function storeTests<S>(makeStore: MakeStore<S>): (title: string, fn: (store: S) => Promise<void>) => void {
  return (title, fn) =>
    test(title, async () => {
      const fixture = await makeStore();
      try {
        await fn(fixture.store);
      } finally {
        await fixture.cleanup();
      }
    });
}
