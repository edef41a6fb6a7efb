/**
 * Fingerprints per plugin (issue 23 item 6): a library version is re-chunked only when the
 * source, chunker or options that built it changed. Changing source A's options re-chunks A's
 * libraries only; a chunker change re-chunks what that chunker built, and nothing else.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKernel, type Kernel } from '../../core/kernel.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { createTestLogger } from '../../core/testing/index.ts';
import { RECHUNK_JOB_KIND, queueRechunks } from '../../core/rechunk.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'refdesk-fingerprints-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

interface Knobs {
  /** The notes source's option (source A). */
  greeting: string;
  /** The markdown chunker's option. */
  markdownTokens: number;
  /** The openapi-operations chunker's option (a chunker that builds none of these libraries). */
  operationTokens: number;
  /** The upload source's option (source B). */
  uploadMaxFiles?: number;
}

let n = 0;
async function kernelWith(k: Knobs): Promise<Kernel> {
  const config = join(dir, `k${n++}.yaml`);
  writeFileSync(
    config,
    [
      'plugins:',
      `  - use: ${JSON.stringify(join(ROOT, 'plugins/store-embedded/index.ts'))}`,
      `  - use: ${JSON.stringify(join(ROOT, 'plugins/chunker-markdown/index.ts'))}`,
      `    options: { markdown: { maxInfoTokens: ${k.markdownTokens} } }`,
      `  - use: ${JSON.stringify(join(ROOT, 'plugins/source-upload/index.ts'))}`,
      `    options: { upload: { maxFiles: ${k.uploadMaxFiles ?? 20000} } }`,
      `  - use: ${JSON.stringify(join(ROOT, 'plugins/source-openapi/index.ts'))}`,
      `    options: { openapi-operations: { maxInfoTokens: ${k.operationTokens} } }`,
      `  - use: ${JSON.stringify(join(ROOT, 'test/fixtures/custom-source/notes-source.ts'))}`,
      `    options: { notes: { greeting: ${k.greeting} } }`,
      'slots:',
      '  store: embedded',
      '  chunkers: [markdown, openapi-operations]',
      '',
    ].join('\n'),
  );
  const kernel = await createKernel(config, { env: { dataDir: join(dir, 'data'), mode: 'server' }, logger: createTestLogger() });
  await kernel.open();
  return kernel;
}

/**
 * The kernel with a store written for an earlier kernel 1.x: no servedBuildChunkers (optional), so
 * queueRechunks reads version by version (listVersions, getDocuments).
 */
function withoutServedBuildChunkers(kernel: Kernel): Kernel {
  const store = new Proxy(kernel.store, {
    get: (target, name) => (name === 'servedBuildChunkers' ? undefined : (Reflect.get(target, name, target) as unknown)),
    has: (target, name) => name !== 'servedBuildChunkers' && Reflect.has(target, name),
  });
  return new Proxy(kernel, { get: (target, name) => (name === 'store' ? store : (Reflect.get(target, name, target) as unknown)) });
}

/** Queues the rechunks a kernel's configuration calls for, runs them, and answers what was queued. */
async function rechunked(kernel: Kernel): Promise<string[]> {
  return rechunkedBy(kernel, kernel);
}

/** The same, with queueRechunks reading the store version by version. */
async function rechunkedByVersion(kernel: Kernel): Promise<string[]> {
  assert.equal(typeof kernel.store.servedBuildChunkers, 'function', 'the embedded store lists its served builds in one read');
  return rechunkedBy(kernel, withoutServedBuildChunkers(kernel));
}

async function rechunkedBy(kernel: Kernel, planner: Kernel): Promise<string[]> {
  const { queued } = await queueRechunks(planner);
  for (const job of await kernel.store.listJobs({ state: 'queued' })) {
    assert.equal(job.kind, RECHUNK_JOB_KIND);
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
  }
  return queued.sort();
}

async function withKernel<T>(k: Knobs, fn: (kernel: Kernel) => Promise<T>): Promise<T> {
  const kernel = await kernelWith(k);
  try {
    return await fn(kernel);
  } finally {
    await kernel.close();
  }
}

test('changing source A re-chunks A only; a chunker change re-chunks what it built, and nothing else', async () => {
  const base: Knobs = { greeting: 'Hello', markdownTokens: 400, operationTokens: 600 };
  const folder = join(dir, 'docs');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'guide.md'), '# Guide\n\n## Install\n\nRun `guide install` to set it up.\n');
  await withKernel(base, async (kernel) => {
    for (const input of [
      { source: 'notes', id: '/notes/alpha', spec: { project: 'Alpha', topics: ['one', 'two'] } },
      { source: 'upload', name: 'beta', spec: { path: folder } },
    ]) {
      const { job } = await addLibrary(kernel, input);
      assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
    }
    assert.deepEqual(await rechunked(kernel), [], 'the same configuration re-chunks nothing');
  });

  const a = { ...base, greeting: 'Howdy' };
  assert.deepEqual(await withKernel(a, rechunked), ['/notes/alpha'], "source A's options changed: A's library only");
  assert.deepEqual(await withKernel(a, rechunked), [], 'once re-chunked, its documents carry the new fingerprint');

  const b = { ...a, uploadMaxFiles: 500 };
  assert.deepEqual(await withKernel(b, rechunkedByVersion), ['/docs/beta'], "source B's options changed: B's library only (read version by version)");

  const ops = { ...b, operationTokens: 300 };
  assert.deepEqual(await withKernel(ops, rechunked), [], 'the openapi-operations chunker built none of them');

  const md = { ...ops, markdownTokens: 60 };
  assert.deepEqual(await withKernel(md, rechunked), ['/docs/beta', '/notes/alpha'], 'the markdown chunker built both');
  assert.deepEqual(await withKernel(md, rechunked), []);
  assert.deepEqual(await withKernel(md, rechunkedByVersion), []);
  const md2 = { ...md, markdownTokens: 80 };
  assert.deepEqual(await withKernel(md2, rechunkedByVersion), ['/docs/beta', '/notes/alpha'], 'read version by version: the same two');
});
