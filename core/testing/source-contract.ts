/**
 * A reusable node:test suite for the Source contract: every Source implementation runs it.
 *
 *   runSourceContract('upload', async () => ({ source, spec: { path: dir }, cleanup }));
 *
 * `makeSource` returns a source, a library spec it can read (already valid against the source's
 * specSchema) that yields at least one document, and optionally a `cleanup` run after each test.
 * Each test calls `makeSource` again.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Source, SourceContext, SourceDocument } from '../contracts.ts';
import { lineMapProblems } from '../includes/line-map.ts';
import { withFixture } from './fixture.ts';

export interface SourceFixture {
  source: Source;
  spec: Record<string, unknown>;
  cleanup?(): Promise<void>;
}

export interface SourceContractOptions {
  /** How long one read may take before the test fails as hung, in milliseconds (default 10 s). */
  timeoutMs?: number;
  /** The library ID the reads are made for (default `/docs/contract-test`). */
  libraryId?: string;
  /** The version the reads are made for (default '', the default version). */
  version?: string;
}

/**
 * What is wrong with these documents as a read's output: one line per problem, none when they
 * keep the contract (relative forward-slash paths without '.', '..' or empty segments, no
 * duplicate path, a format, string content, string url/title/hash when present, and a line map
 * with one non-decreasing line number per content line when present).
 */
export function sourceDocumentProblems(documents: readonly SourceDocument[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  documents.forEach((doc, i) => {
    const at = `document #${i + 1}`;
    if (doc === null || typeof doc !== 'object') {
      problems.push(`${at} is not an object`);
      return;
    }
    const { path } = doc;
    if (typeof path !== 'string' || path === '') {
      problems.push(`${at} has no path`);
    } else {
      const name = `${at} (${JSON.stringify(path)})`;
      if (path.includes('\\')) problems.push(`${name}: the path must use forward slashes, not backslashes`);
      if (path.startsWith('/')) problems.push(`${name}: the path must be relative (no leading '/')`);
      if (/^[A-Za-z]:/.test(path)) problems.push(`${name}: the path must be relative (no drive letter)`);
      const segments = path.split('/');
      if (segments.includes('..')) problems.push(`${name}: the path must not contain a '..' segment`);
      if (segments.includes('.')) problems.push(`${name}: the path must not contain a '.' segment`);
      if (segments.some((s, k) => s === '' && !(k === 0 && path.startsWith('/')))) {
        problems.push(`${name}: the path must not contain an empty segment ('//' or a trailing '/')`);
      }
      if (path.includes('\0')) problems.push(`${name}: the path must not contain a NUL character`);
      if (seen.has(path)) problems.push(`${name}: the same path was yielded twice`);
      seen.add(path);
    }
    const name = typeof path === 'string' && path !== '' ? path : at;
    if (typeof doc.format !== 'string' || doc.format === '') problems.push(`${name}: format must be a non-empty string`);
    if (typeof doc.content !== 'string') problems.push(`${name}: content must be a string`);
    for (const k of ['url', 'title', 'hash'] as const) {
      if (doc[k] !== undefined && typeof doc[k] !== 'string') problems.push(`${name}: ${k} must be a string when present`);
    }
    if (doc.lineMap !== undefined && typeof doc.content === 'string') {
      for (const p of lineMapProblems(doc.lineMap, doc.content)) problems.push(`${name}: ${p}`);
    }
  });
  return problems;
}

interface ReadOutcome {
  documents: SourceDocument[];
  error: unknown;
  /** True when the read neither finished nor failed within the time allowed. */
  hung: boolean;
}

/** Drains one read; never hangs longer than `timeoutMs`. */
async function drain(source: Source, ctx: SourceContext, timeoutMs: number): Promise<ReadOutcome> {
  const documents: SourceDocument[] = [];
  let iterator: AsyncIterator<SourceDocument> | undefined;
  const reading = (async (): Promise<Omit<ReadOutcome, 'hung'>> => {
    try {
      iterator = source.read(ctx)[Symbol.asyncIterator]();
      for (;;) {
        const r = await iterator.next();
        if (r.done) return { documents, error: null };
        documents.push(r.value);
      }
    } catch (error) {
      return { documents, error: error ?? new Error('read() threw a nullish value') };
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), timeoutMs);
  });
  try {
    const outcome = await Promise.race([reading, timeout]);
    if (outcome === 'hung') {
      // Best effort: ask the iterator to stop, without waiting for it.
      void Promise.resolve()
        .then(() => iterator?.return?.())
        .catch(() => {});
      return { documents, error: null, hung: true };
    }
    return { ...outcome, hung: false };
  } finally {
    clearTimeout(timer);
  }
}

/** One `next()` of a read, bounded by `timeoutMs`. */
async function drainStep(iterator: AsyncIterator<SourceDocument>, timeoutMs: number): Promise<{ done: boolean; error: unknown; hung: boolean }> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), timeoutMs);
  });
  const step = iterator.next().then(
    (r) => ({ done: r.done === true, error: null as unknown, hung: false }),
    (error: unknown) => ({ done: false, error: error ?? new Error('read() threw a nullish value'), hung: false }),
  );
  try {
    const out = await Promise.race([step, hung]);
    return out === 'hung' ? { done: false, error: null, hung: true } : out;
  } finally {
    clearTimeout(timer);
  }
}

function describeError(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}

export function runSourceContract(
  name: string,
  makeSource: () => Promise<SourceFixture>,
  options: SourceContractOptions = {},
): void {
  const timeoutMs = options.timeoutMs ?? 10_000;

  function context(spec: Record<string, unknown>, signal: AbortSignal): SourceContext {
    return {
      libraryId: options.libraryId ?? '/docs/contract-test',
      version: options.version ?? '',
      spec,
      signal,
      previous: new Map(),
      log() {},
      progress() {},
    };
  }

  const withSource = (fn: (fixture: SourceFixture) => Promise<void>) => withFixture(makeSource, fn);

  async function readAll(fixture: SourceFixture): Promise<SourceDocument[]> {
    const out = await drain(fixture.source, context(fixture.spec, new AbortController().signal), timeoutMs);
    assert.ok(!out.hung, `read() did not finish within ${timeoutMs} ms (it yielded ${out.documents.length} documents)`);
    if (out.error !== null) {
      assert.fail(`read() failed after ${out.documents.length} documents: ${describeError(out.error)}`);
    }
    return out.documents;
  }

  // The suite's own timeout is a backstop: each read is already bounded by timeoutMs.
  const testOptions = { timeout: timeoutMs * 3 + 5_000 };

  describe(`Source contract: ${name}`, () => {
    test('read() yields at least one document', testOptions, () =>
      withSource(async (fixture) => {
        const docs = await readAll(fixture);
        assert.ok(docs.length >= 1, 'read() yielded no documents for the given spec');
      }));

    test('every document has a relative forward-slash path (no leading "/", no ".." segment), no duplicates, a format and string content', testOptions, () =>
      withSource(async (fixture) => {
        const docs = await readAll(fixture);
        assert.deepEqual(sourceDocumentProblems(docs), [], 'the documents break the Source contract');
      }));

    test('a second read of the same spec yields the same paths in the same order', testOptions, () =>
      withSource(async (fixture) => {
        const first = (await readAll(fixture)).map((d) => d.path);
        const second = (await readAll(fixture)).map((d) => d.path);
        assert.deepEqual(second, first, 'the order of documents must be stable from one read to the next');
      }));

    test('read() stops with an error, and yields nothing, when the signal is already aborted', testOptions, () =>
      withSource(async (fixture) => {
        const controller = new AbortController();
        controller.abort();
        const out = await drain(fixture.source, context(fixture.spec, controller.signal), timeoutMs);
        assert.ok(!out.hung, `read() with an aborted signal neither failed nor finished within ${timeoutMs} ms`);
        assert.equal(out.documents.length, 0, `read() yielded ${out.documents.length} documents although the signal was already aborted`);
        assert.notEqual(out.error, null, 'read() finished without an error although the signal was already aborted');
      }));

    test('read() yields no further document once the signal is aborted mid-read', testOptions, () =>
      withSource(async (fixture) => {
        const controller = new AbortController();
        const iterator = fixture.source.read(context(fixture.spec, controller.signal))[Symbol.asyncIterator]();
        const step = async () => {
          const out = await drainStep(iterator, timeoutMs);
          assert.ok(!out.hung, `read() did not answer within ${timeoutMs} ms`);
          return out;
        };
        const first = await step();
        assert.equal(first.error, null, `read() failed before its first document: ${describeError(first.error)}`);
        assert.ok(!first.done, 'read() yielded no documents for the given spec');
        controller.abort();
        const next = await step();
        assert.ok(next.done || next.error !== null, 'read() yielded another document after the signal was aborted');
        if (next.error === null) await iterator.return?.();
      }));
  });
}
