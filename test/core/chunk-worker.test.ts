/**
 * Large documents are chunked in a worker thread (issue 17: no event-loop stall while a large
 * page is parsed), with the same chunkers and options as the kernel's: the snippets are the ones
 * the main thread would make.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Kernel } from '../../core/kernel.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { CHUNK_WORKER_MIN_CHARS, chunkDocument, chunkWorkerOf } from '../../core/chunk-worker.ts';
import { openTestKernel, type TestKernel } from '../helpers/test-kernel.ts';

let dir: string;
let tk: TestKernel;
let kernel: Kernel;

/** A long page: many sections, code and prose (well over CHUNK_WORKER_MIN_CHARS). */
function largePage(seed: string): string {
  const out = [`# The ${seed} guide`, ''];
  for (let i = 0; i < 60; i++) {
    out.push(`## ${seed} topic ${i}`, '', `This section explains how ${seed} handles case ${i}, with details about options, defaults and errors.`, '');
    out.push('```ts', `const ${seed}${i} = create${seed}({ level: ${i} });`, `${seed}${i}.run();`, '```', '');
  }
  return out.join('\n');
}

before(async () => {
  tk = await openTestKernel({
    prefix: 'refdesk-chunk-worker-',
    plugins: ['plugins/store-embedded', { use: 'plugins/chunker-markdown', options: { markdown: { maxInfoTokens: 120 } } }, 'plugins/source-upload'],
    mode: 'server',
  });
  ({ dir, kernel } = tk);
});
after(() => tk?.close());

test('a large document is chunked in the worker thread into the snippets the main thread makes; a small one stays here', async () => {
  const doc = { path: 'guide.md', format: 'markdown', content: largePage('widget') };
  assert.ok(doc.content.length >= CHUNK_WORKER_MIN_CHARS);
  const worker = chunkWorkerOf(kernel);
  const before = worker.chunked;
  const inWorker = await chunkDocument(kernel, doc);
  assert.equal(worker.chunked, before + 1, 'chunked in the worker thread');
  assert.deepEqual(inWorker, kernel.chunkerFor('markdown').chunk(doc), 'the same snippets (same chunker options: maxInfoTokens 120)');
  await chunkDocument(kernel, { path: 'small.md', format: 'markdown', content: '# Small\n\nA short page.\n' });
  assert.equal(worker.chunked, before + 1, 'a small document is chunked on the main thread');
});

test('an ingest through the worker thread stores the same snippets as one on the main thread', async () => {
  const folder = join(dir, 'docs');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'a.md'), largePage('gadget'));
  writeFileSync(join(folder, 'b.md'), '# Intro\n\nSmall page about gadgets.\n');
  const snippetsOf = async (name: string, minChars: number) => {
    const { job } = await addLibrary(kernel, { source: 'upload', name, spec: { path: folder } });
    const done = await runIngestJob(kernel, job.id, { chunkWorkerMinChars: minChars });
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    return (await kernel.store.getSnippets(`/docs/${name}`, '')).map(({ id: _id, ...s }) => s);
  };
  const before = chunkWorkerOf(kernel).chunked;
  const viaWorker = await snippetsOf('via-worker', CHUNK_WORKER_MIN_CHARS);
  assert.equal(chunkWorkerOf(kernel).chunked, before + 1);
  const here = await snippetsOf('main-thread', 0);
  assert.equal(chunkWorkerOf(kernel).chunked, before + 1, 'chunkWorkerMinChars 0: nothing in the worker');
  assert.ok(viaWorker.length > 20);
  assert.deepEqual(viaWorker, here);
});

test("a server's large ingest chunks its small documents in the worker thread too, into the same snippets", async () => {
  const folder = join(dir, 'many-small');
  mkdirSync(folder, { recursive: true });
  const docs = 6;
  for (let i = 0; i < docs; i++) writeFileSync(join(folder, `p${i}.md`), `# Page ${i}\n\nA short page about \`part${i}()\`.\n\n## Use\n\nCall part${i} once.\n`);
  const ingest = async (name: string, options: Parameters<typeof runIngestJob>[2]) => {
    const worker = chunkWorkerOf(kernel);
    const before = worker.chunked;
    const { job } = await addLibrary(kernel, { source: 'upload', name, spec: { path: folder } });
    const done = await runIngestJob(kernel, job.id, options);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    const snippets = (await kernel.store.getSnippets(`/docs/${name}`, '')).map(({ id: _id, ...s }) => s);
    return { inWorker: worker.chunked - before, snippets };
  };
  const small = await ingest('small-library', {});
  assert.equal(small.inWorker, 0, 'a small library: every small document on the main thread');
  // Past the characters read: the documents after that point go to the worker.
  const byChars = await ingest('past-chars', { allInWorkerChars: 1 });
  assert.equal(byChars.inWorker, docs - 1, 'every document after the first');
  // A source expecting that many documents (the upload source says how many): all of them.
  const byDocs = await ingest('many-docs', { allInWorkerDocs: docs });
  assert.equal(byDocs.inWorker, docs, 'every document');
  assert.ok(small.snippets.length >= 2 * docs);
  assert.deepEqual(byChars.snippets, small.snippets);
  assert.deepEqual(byDocs.snippets, small.snippets);
});

