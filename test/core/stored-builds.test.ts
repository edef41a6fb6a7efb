/**
 * Stored builds (issue 17): each finalized build keeps its normalised documents compressed in
 * DATA_DIR/builds/<buildId>.docs.gz; a chunker change re-chunks from them with the source gone;
 * a missing or damaged segment is rebuilt and answers the same; deleting a library removes them.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createKernel, type Kernel } from '../../core/kernel.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { buildFingerprints, chunkerFingerprints } from '../../core/fingerprint.ts';

/** The fingerprints of the configured chunkers (what a chunker change changes). */
const chunkingFingerprint = (kernel: Kernel) => chunkerFingerprints(kernel).join(',');
import { createTestLogger } from '../../core/testing/index.ts';
import { readStoredDocs, storedDocsPath, STORED_DOCS_DIR } from '../../core/stored-docs.ts';
import { RECHUNK_JOB_KIND, queueRechunks } from '../../core/rechunk.ts';
import { JobRunner } from '../../server/job-runner.ts';
import { SEGMENT_DIR } from '../../plugins/store-embedded/segment.ts';
import { writeTestConfig } from '../helpers/test-kernel.ts';

let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'refdesk-stored-builds-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A long page: a section of many paragraphs, so the chunker's maxInfoTokens decides the split. */
function page(title: string, words: string): string {
  const paras = Array.from({ length: 12 }, (_, i) => `${words} paragraph ${i} explains the ${title.toLowerCase()} option number ${i} in detail, with enough words to count.`);
  return `# ${title}\n\n## Usage of ${title}\n\n${paras.join('\n\n')}\n\n\`\`\`js\nconst ${title.toLowerCase()} = require('${title.toLowerCase()}');\n\`\`\`\n`;
}

function writeDocs(folder: string, files: Record<string, string>): void {
  mkdirSync(folder, { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(folder, name), content);
}

async function kernelWith(name: string, dataDir: string, maxInfoTokens: number): Promise<Kernel> {
  const config = writeTestConfig(join(dir, `${name}.yaml`), [
    'plugins/store-embedded',
    { use: 'plugins/chunker-markdown', options: { markdown: { maxInfoTokens } } },
    'plugins/source-upload',
  ]);
  const kernel = await createKernel(config, { env: { dataDir, mode: 'server' }, logger: createTestLogger() });
  await kernel.open();
  return kernel;
}

async function ingest(kernel: Kernel, name: string, folder: string) {
  const { job } = await addLibrary(kernel, { source: 'upload', name, spec: { path: folder } });
  const done = await runIngestJob(kernel, job.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
  return done;
}

const served = async (kernel: Kernel, id: string) => (await kernel.store.getVersion(id, ''))!.activeBuildId!;
const answer = async (kernel: Kernel, id: string, q: string) =>
  JSON.stringify((await kernel.store.search(id, '', q, 20)).map((h) => ({ id: h.snippet.id, score: h.score.toFixed(6), content: h.snippet.content })));

test('a build stores the documents its chunker consumed; a refresh replaces them; deleting the library removes them', async () => {
  const dataDir = join(dir, 'data-a');
  const folder = join(dir, 'docs-a');
  writeDocs(folder, { 'alpha.md': page('Alpha', 'tiger'), 'beta.md': page('Beta', 'lion') });
  const kernel = await kernelWith('a', dataDir, 400);
  try {
    await ingest(kernel, 'stored', folder);
    const first = await served(kernel, '/docs/stored');
    const docs = [];
    for await (const d of readStoredDocs(dataDir, first)) docs.push(d);
    assert.deepEqual(docs.map((d) => d.path).sort(), ['alpha.md', 'beta.md']);
    assert.equal(docs.find((d) => d.path === 'alpha.md')!.content, page('Alpha', 'tiger'));
    assert.ok(docs.every((d) => typeof d.hash === 'string' && d.hash.length > 0 && d.format === 'markdown'));

    writeFileSync(join(folder, 'beta.md'), page('Beta', 'leopard'));
    await ingest(kernel, 'stored', folder);
    const second = await served(kernel, '/docs/stored');
    assert.notEqual(second, first);
    assert.ok(!existsSync(storedDocsPath(dataDir, first)), "the replaced build's stored documents are removed");
    const again = [];
    for await (const d of readStoredDocs(dataDir, second)) again.push(d);
    assert.match(again.find((d) => d.path === 'beta.md')!.content, /leopard/);
    assert.match(again.find((d) => d.path === 'alpha.md')!.content, /tiger/, 'an unchanged document is stored again');

    assert.equal(await kernel.store.deleteLibrary('/docs/stored'), true);
    assert.deepEqual(readdirSync(join(dataDir, STORED_DOCS_DIR)), [], 'deleting the library removes its stored documents');
  } finally {
    await kernel.close();
  }
});

test('a failed build leaves no stored documents behind', async () => {
  const dataDir = join(dir, 'data-f');
  const folder = join(dir, 'docs-f');
  writeDocs(folder, { 'only.txt.bin': 'not documentation' });
  const kernel = await kernelWith('f', dataDir, 400);
  try {
    const { job } = await addLibrary(kernel, { source: 'upload', name: 'empty', spec: { path: folder } });
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'failed');
    const left = existsSync(join(dataDir, STORED_DOCS_DIR)) ? readdirSync(join(dataDir, STORED_DOCS_DIR)) : [];
    assert.deepEqual(left, []);
  } finally {
    await kernel.close();
  }
});

test('a chunker change re-chunks every library from its stored documents, with the source gone, as a job', async () => {
  const dataDir = join(dir, 'data-r');
  const folder = join(dir, 'docs-r');
  writeDocs(folder, { 'alpha.md': page('Alpha', 'tiger'), 'beta.md': page('Beta', 'lion'), 'gamma.md': page('Gamma', 'zebra') });
  let kernel = await kernelWith('r1', dataDir, 400);
  const before = await ingest(kernel, 'rechunked', folder);
  const oldFingerprint = chunkingFingerprint(kernel);
  assert.deepEqual((await queueRechunks(kernel)).queued, [], 'nothing to re-chunk while the configuration is the same');
  await kernel.close();
  rmSync(folder, { recursive: true, force: true }); // the source is gone

  kernel = await kernelWith('r2', dataDir, 60); // smaller info snippets: another chunking
  try {
    assert.notEqual(chunkingFingerprint(kernel), oldFingerprint);
    const runner = new JobRunner(kernel);
    await runner.resumeQueued();
    await runner.idle();
    const jobs = await kernel.store.listJobs({ libraryId: '/docs/rechunked' });
    const rechunk = jobs.find((j) => j.kind === RECHUNK_JOB_KIND);
    assert.ok(rechunk, 'a rechunk job is visible in the jobs');
    assert.equal(rechunk.state, 'succeeded', JSON.stringify(rechunk.error));
    assert.ok(rechunk.progress.snippets! > before.progress.snippets!, `re-chunked with the new options: ${rechunk.progress.snippets} snippets, ${before.progress.snippets} before`);
    const docs = await kernel.store.getDocuments('/docs/rechunked', '');
    assert.equal(docs.size, 3);
    assert.ok([...docs.values()].every((d) => buildFingerprints(kernel, 'upload').current(d.chunker)));
    assert.match(await answer(kernel, '/docs/rechunked', 'zebra gamma option'), /zebra/);
    // The new build stored its documents too: a further change can re-chunk again.
    const stored = [];
    for await (const d of readStoredDocs(dataDir, await served(kernel, '/docs/rechunked'))) stored.push(d.path);
    assert.deepEqual(stored.sort(), ['alpha.md', 'beta.md', 'gamma.md']);
    assert.deepEqual((await queueRechunks(kernel)).queued, [], 'once re-chunked, nothing more is queued');
  } finally {
    await kernel.close();
  }
});

test('damaged stored documents fail the rechunk job clearly and leave the served version as it was', async () => {
  const dataDir = join(dir, 'data-d');
  const folder = join(dir, 'docs-d');
  writeDocs(folder, { 'alpha.md': page('Alpha', 'tiger') });
  let kernel = await kernelWith('d1', dataDir, 400);
  await ingest(kernel, 'damaged', folder);
  const build = await served(kernel, '/docs/damaged');
  const question = await answer(kernel, '/docs/damaged', 'tiger alpha');
  await kernel.close();
  const file = storedDocsPath(dataDir, build);
  const bytes = readFileSync(file);
  bytes[bytes.length - 6] ^= 0xff; // gzip's crc32 no longer matches
  writeFileSync(file, bytes);

  kernel = await kernelWith('d2', dataDir, 60);
  try {
    const plan = await queueRechunks(kernel);
    assert.deepEqual(plan.queued, ['/docs/damaged']);
    const job = (await kernel.store.listJobs({ libraryId: '/docs/damaged', state: 'queued' }))[0];
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'failed');
    assert.match(done.error!.message, /stored documents .* cannot be read|damaged|crc|check/i);
    assert.equal(await served(kernel, '/docs/damaged'), build, 'the served build is unchanged');
    assert.equal(await answer(kernel, '/docs/damaged', 'tiger alpha'), question);
  } finally {
    await kernel.close();
  }
});

test('stored documents of another format are refused as old-format, not read', async () => {
  const dataDir = join(dir, 'data-o');
  mkdirSync(join(dataDir, STORED_DOCS_DIR), { recursive: true });
  writeFileSync(join(dataDir, STORED_DOCS_DIR, 'b1.docs.gz'), gzipSync(JSON.stringify({ format: 'refdesk-docs', version: 99 }) + '\n'));
  await assert.rejects(async () => {
    for await (const _ of readStoredDocs(dataDir, 'b1'));
  }, (e: Error & { reason?: string }) => e.reason === 'old-format');
  await assert.rejects(async () => {
    for await (const _ of readStoredDocs(dataDir, 'b2'));
  }, (e: Error & { reason?: string }) => e.reason === 'missing');
});

test('a deleted or corrupted segment is rebuilt on first need and answers the same', async () => {
  const dataDir = join(dir, 'data-s');
  const folder = join(dir, 'docs-s');
  writeDocs(folder, { 'alpha.md': page('Alpha', 'tiger'), 'beta.md': page('Beta', 'lion') });
  let kernel = await kernelWith('s', dataDir, 400);
  await ingest(kernel, 'seg', folder);
  const q = 'lion beta option';
  const expected = await answer(kernel, '/docs/seg', q);
  const segment = join(dataDir, SEGMENT_DIR, `${await served(kernel, '/docs/seg')}.seg`);
  await kernel.close();
  rmSync(folder, { recursive: true, force: true });

  rmSync(segment);
  kernel = await kernelWith('s', dataDir, 400);
  try {
    assert.equal(await answer(kernel, '/docs/seg', q), expected, 'rebuilt after deletion');
    assert.ok(existsSync(segment), 'the rebuilt segment is written again');
  } finally {
    await kernel.close();
  }
  const bytes = readFileSync(segment);
  bytes[bytes.length - 300] ^= 0xff;
  bytes[400] ^= 0xff;
  writeFileSync(segment, bytes);
  kernel = await kernelWith('s', dataDir, 400);
  try {
    assert.equal(await answer(kernel, '/docs/seg', q), expected, 'rebuilt after corruption');
  } finally {
    await kernel.close();
  }
});

test("a chunker's revision is part of the chunking fingerprint: new chunking code re-chunks stored builds", async () => {
  const kernel = await kernelWith('rev', join(dir, 'data-rev'), 400);
  try {
    const before = chunkingFingerprint(kernel);
    const markdown = kernel.chunkers[0];
    assert.ok((markdown.revision ?? 0) >= 2, 'the markdown chunker states its revision');
    kernel.chunkers[0] = { formats: markdown.formats, chunk: (d) => markdown.chunk(d), revision: (markdown.revision ?? 0) + 1 };
    assert.notEqual(chunkingFingerprint(kernel), before);
    kernel.chunkers[0] = markdown;
    assert.equal(chunkingFingerprint(kernel), before);
  } finally {
    await kernel.close();
  }
});
