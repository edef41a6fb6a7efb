/**
 * Chunking is pipelined (issue 17): large documents go to the chunk worker without the ingest
 * waiting for each before reading the next, and small ones are chunked here meanwhile. The build
 * must be the one a document-at-a-time ingest makes: the same snippets in the same order, a
 * document whose chunking fails skipped (and only it), with more documents than the in-flight
 * window holds.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKernel, type Kernel } from '../../core/kernel.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { createTestLogger } from '../../core/testing/index.ts';
import { CHUNK_WORKER_MIN_CHARS, CHUNK_WORKER_SHARE_CHARS, chunkWorkerOf } from '../../core/chunk-worker.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let kernel: Kernel;
const logger = createTestLogger();

/** A chunker plugin: the markdown chunker, failing on documents whose path says "broken". */
function writeFailingChunker(file: string): void {
  writeFileSync(
    file,
    [
      `import { defineChunker, definePlugin } from ${JSON.stringify(join(ROOT, 'core/define.ts'))};`,
      `import { MarkdownChunker } from ${JSON.stringify(join(ROOT, 'plugins/chunker-markdown/markdown-chunker.ts'))};`,
      'class Picky extends MarkdownChunker {',
      '  chunk(doc) {',
      "    if (doc.path.includes('broken')) throw new Error('cannot parse ' + doc.path);",
      '    return super.chunk(doc);',
      '  }',
      '}',
      'export default definePlugin({',
      "  name: 'test-picky', version: '1.0.0', kernel: '^1.0.0',",
      "  definitions: [defineChunker({ kind: 'picky', options: { type: 'object', additionalProperties: false, properties: {} }, deps: {},",
      '    create: () => new Picky({ maxInfoTokens: 150, maxDescriptionChars: 600 }) })],',
      '});',
      '',
    ].join('\n'),
  );
}

function largePage(seed: string, sections: number): string {
  const out = [`# The ${seed} guide`, ''];
  for (let i = 0; i < sections; i++) {
    out.push(`## ${seed} topic ${i}`, '', `This section explains how ${seed} handles case ${i}: options, defaults and errors.`, '');
    out.push('```ts', `const ${seed}${i} = create${seed}({ level: ${i} });`, `${seed}${i}.run();`, '```', '');
  }
  return out.join('\n');
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'refdesk-ingest-pipeline-'));
  const plugin = join(dir, 'picky-chunker.mts');
  writeFailingChunker(plugin);
  const config = join(dir, 'refdesk.yaml');
  writeFileSync(
    config,
    [
      'plugins:',
      `  - use: ${JSON.stringify(join(ROOT, 'plugins/store-embedded/index.ts'))}`,
      `  - use: ${JSON.stringify(plugin)}`,
      `  - use: ${JSON.stringify(join(ROOT, 'plugins/source-upload/index.ts'))}`,
      'slots:',
      '  chunkers: [picky]',
      '',
    ].join('\n'),
  );
  kernel = await createKernel(config, { env: { dataDir: join(dir, 'data'), mode: 'server' }, logger });
  await kernel.open();
});
after(async () => {
  await kernel?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a pipelined ingest (large documents in the worker, small ones here) stores what a main-thread ingest stores, in order, skipping only the failing document', async () => {
  const folder = join(dir, 'docs');
  mkdirSync(folder, { recursive: true });
  // More documents than the in-flight window (8 in a server, 32 outside), large and small interleaved, so that small
  // documents chunked here are ready before the large ones sent ahead of them.
  let large = 0;
  for (let i = 0; i < 48; i++) {
    const name = `p${String(i).padStart(2, '0')}${i === 16 ? '-broken' : ''}.md`;
    const isLarge = i % 3 !== 2;
    if (isLarge) large++;
    writeFileSync(join(folder, name), isLarge ? largePage(`w${i}x`, 60 + (i % 7) * 10) : `# Page ${i}\n\nA short page number ${i} about \`thing${i}()\`.\n`);
  }
  assert.ok(largePage("w0x", 60).length >= CHUNK_WORKER_MIN_CHARS);
  const ingest = async (name: string, minChars: number) => {
    const { job } = await addLibrary(kernel, { source: 'upload', name, spec: { path: folder } });
    const done = await runIngestJob(kernel, job.id, { chunkWorkerMinChars: minChars });
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    const snippets = (await kernel.store.getSnippets(`/docs/${name}`, '')).map(({ id: _id, ...s }) => s);
    const log = readFileSync(join(kernel.env.dataDir, 'jobs', `${job.id}.log`), 'utf8');
    return { done, snippets, log };
  };
  const before = chunkWorkerOf(kernel).chunked;
  const pipelined = await ingest('pipelined', CHUNK_WORKER_MIN_CHARS);
  assert.equal(chunkWorkerOf(kernel).chunked - before, large - 1, 'every large document but the failing one was chunked in the worker: ' + JSON.stringify(logger.lines.filter((l) => l.level === 'warn')));
  const here = await ingest('here', 0);
  assert.equal(chunkWorkerOf(kernel).chunked - before, large - 1, 'nothing more in the worker with chunkWorkerMinChars 0');

  assert.ok(pipelined.snippets.length > 1000, String(pipelined.snippets.length));
  assert.deepEqual(pipelined.snippets, here.snippets, 'the same snippets in the same order');
  const paths = [...new Set(pipelined.snippets.map((s) => s.sourcePath))];
  assert.deepEqual(paths, [...paths].sort(), 'documents in the order the source gave them');
  assert.ok(!paths.some((p) => p.includes('broken')), 'the failing document has no snippets');
  assert.equal(paths.length, 47);
  assert.equal(pipelined.done.progress.files, 47);
  for (const { log } of [pipelined, here]) assert.match(log, /skipped p16-broken\.md: the chunker failed \(cannot parse p16-broken\.md\)/);
});

test('outside a server (refdesk add), large documents are chunked here too while the worker thread is busy, into the same build', async () => {
  const writer = await createKernel(join(dir, 'refdesk.yaml'), { env: { dataDir: join(dir, 'writer-data'), mode: 'writer' }, logger });
  await writer.open();
  try {
    const folder = join(dir, 'writer-docs');
    mkdirSync(folder, { recursive: true });
    // The first page is chunked here (the worker starts only after CHUNK_WORKER_SHARE_CHARS were);
    // the second keeps the worker busy (as many queued) while the next large pages are read:
    // those are chunked on this thread.
    const huge = largePage('huge', 2400);
    assert.ok(huge.length > CHUNK_WORKER_SHARE_CHARS);
    writeFileSync(join(folder, 'a00.md'), huge);
    writeFileSync(join(folder, 'a01.md'), largePage('huger', 2400));
    for (let i = 2; i <= 10; i++) writeFileSync(join(folder, `a${String(i).padStart(2, '0')}.md`), largePage(`v${i}y`, 70));
    const ingest = async (name: string, minChars: number) => {
      const { job } = await addLibrary(writer, { source: 'upload', name, spec: { path: folder } });
      const done = await runIngestJob(writer, job.id, { chunkWorkerMinChars: minChars });
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
      return (await writer.store.getSnippets(`/docs/${name}`, '')).map(({ id: _id, ...s }) => s);
    };
    const before = chunkWorkerOf(writer).chunked;
    const shared = await ingest('shared', CHUNK_WORKER_MIN_CHARS);
    const inWorker = chunkWorkerOf(writer).chunked - before;
    assert.ok(inWorker >= 1 && inWorker < 10, `${inWorker} of 11 large documents chunked in the worker thread`);
    const here = await ingest('here', 0);
    assert.equal(here.length, shared.length);
    assert.deepEqual(shared, here, 'the same snippets in the same order');
  } finally {
    await writer.close();
  }
});
