import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Kernel } from '../../core/kernel.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { definePlugin, defineSource } from '../../core/define.ts';
import type { SourceContext, SourceDocument } from '../../core/contracts.ts';
import { BASE_PLUGINS, openTestKernel, type TestKernel } from '../helpers/test-kernel.ts';

let dir: string;
let tk: TestKernel;
let kernel: Kernel;

// A source whose documents the test controls, and which records what the kernel told it.
const pages = new Map<string, { content: string; etag: string }>();
const seenPrevious: Array<Map<string, unknown>> = [];
let markUnchanged = false;

before(async () => {
  tk = await openTestKernel({
    prefix: 'refdesk-refresh-',
    plugins: [...BASE_PLUGINS, 'plugins/source-upload', 'test/core/scripted-source.ts'],
    mode: 'server',
  });
  ({ dir, kernel } = tk);
});
after(() => tk?.close());

async function logOf(jobId: string): Promise<string> {
  return (await kernel.store.getJobLog(jobId)).map((l) => l.message).join('\n');
}

test('a refresh reuses the snippets of unchanged files, re-chunks changed ones and drops removed ones', async () => {
  const folder = join(dir, 'docs');
  mkdirSync(folder);
  writeFileSync(join(folder, 'a.md'), '# Alpha\n\nAlpha explains routers.\n\n```js\nrouter.get("/a")\n```\n');
  writeFileSync(join(folder, 'b.md'), '# Beta\n\nBeta explains middleware.\n');
  writeFileSync(join(folder, 'c.md'), '# Gamma\n\nGamma explains errors.\n');
  const first = await addLibrary(kernel, { source: 'upload', name: 'refresh-demo', spec: { path: folder } });
  assert.equal((await runIngestJob(kernel, first.job.id)).state, 'succeeded');
  const docs1 = await kernel.store.getDocuments('/docs/refresh-demo', '');
  assert.deepEqual([...docs1.keys()].sort(), ['a.md', 'b.md', 'c.md']);

  writeFileSync(join(folder, 'b.md'), '# Beta\n\nBeta explains middleware and the context object.\n');
  rmSync(join(folder, 'c.md'));
  const second = await addLibrary(kernel, { source: 'upload', name: 'refresh-demo', spec: { path: folder } });
  assert.equal((await runIngestJob(kernel, second.job.id)).state, 'succeeded');
  assert.match(await logOf(second.job.id), /refresh: 1 documents unchanged \(snippets reused\), 1 read and chunked, 1 removed/);

  const snippets = await kernel.store.getSnippets('/docs/refresh-demo', '');
  assert.deepEqual([...new Set(snippets.map((s) => s.sourcePath))].sort(), ['a.md', 'b.md']);
  assert.ok(snippets.some((s) => s.content.includes('context object')), 'the changed file is re-chunked');
  const alpha = snippets.find((s) => s.type === 'code' && s.sourcePath === 'a.md');
  assert.equal(alpha?.code, 'router.get("/a")');
  assert.equal(alpha?.lineStart, 5, 'reused snippets keep their positions');
  const docs2 = await kernel.store.getDocuments('/docs/refresh-demo', '');
  assert.equal(docs2.get('a.md')?.hash, docs1.get('a.md')?.hash);
  assert.notEqual(docs2.get('b.md')?.hash, docs1.get('b.md')?.hash);
});

test('a source gets the previous documents with their meta and may mark them unchanged', async () => {
  pages.set('guide/intro', { content: '# Intro\n\nIntro to scripted docs.\n', etag: '"e1"' });
  pages.set('guide/setup', { content: '# Setup\n\nInstall the scripted package.\n', etag: '"e2"' });
  const first = await addLibrary(kernel, { source: 'scripted', name: 'scripted-demo', spec: {} });
  assert.equal((await runIngestJob(kernel, first.job.id)).state, 'succeeded');
  assert.equal(seenPrevious.at(-1)!.size, 0, 'the first ingest has no previous documents');

  markUnchanged = true;
  pages.set('guide/setup', { content: '# Setup\n\nInstall it with npm.\n', etag: '"e3"' });
  const second = await addLibrary(kernel, { source: 'scripted', name: 'scripted-demo', spec: {} });
  assert.equal((await runIngestJob(kernel, second.job.id)).state, 'succeeded');
  assert.deepEqual(seenPrevious.at(-1)!.get('guide/intro'), { hash: 'h:"e1"', meta: { etag: '"e1"' } });
  assert.match(await logOf(second.job.id), /1 documents unchanged/);
  const snippets = await kernel.store.getSnippets('/docs/scripted-demo', '');
  assert.ok(snippets.some((s) => s.content.includes('Intro to scripted docs')), 'unchanged page kept from the previous build');
  assert.ok(snippets.some((s) => s.content.includes('Install it with npm')));
  const docs = await kernel.store.getDocuments('/docs/scripted-demo', '');
  assert.deepEqual(docs.get('guide/intro')?.meta, { etag: '"e1"' }, 'meta carried over for unchanged documents');
  assert.deepEqual(docs.get('guide/setup')?.meta, { etag: '"e3"' });
});

test('a failed refresh leaves the served build and its document records alone', async () => {
  const before = await kernel.store.getDocuments('/docs/scripted-demo', '');
  pages.clear();
  const job = await addLibrary(kernel, { source: 'scripted', name: 'scripted-demo', spec: {} });
  const done = await runIngestJob(kernel, job.job.id);
  assert.equal(done.state, 'failed');
  assert.deepEqual(await kernel.store.getDocuments('/docs/scripted-demo', ''), before);
  assert.ok(readFileSync(join(dir, 'data', 'refdesk.sqlite')).length > 0);
});

/** The scripted source, loaded by the kernel through test/core/scripted-source.ts. */
export default definePlugin({
  name: 'scripted-source-for-tests',
  version: '0.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineSource({
      kind: 'scripted',
      idPrefix: 'docs',
      specSchema: { type: 'object', additionalProperties: false, properties: {} },
      options: { type: 'object', additionalProperties: false, properties: {} },
      deps: {},
      create: () => ({
        async *read(ctx: SourceContext): AsyncIterable<SourceDocument> {
          seenPrevious.push(new Map(ctx.previous));
          for (const [path, page] of pages) {
            const prev = ctx.previous.get(path);
            if (markUnchanged && prev?.meta.etag === page.etag) {
              yield { path, format: 'markdown', content: '', unchanged: true };
            } else {
              yield { path, format: 'markdown', content: page.content, hash: `h:${page.etag}`, meta: { etag: page.etag } };
            }
          }
        },
      }),
    }),
  ],
});

test('a long read gives the event loop back: timers run while the documents are still being read', async () => {
  pages.clear();
  markUnchanged = false;
  const total = 1500;
  const body = Array.from({ length: 12 }, (_, i) => `## Part ${i}\n\nThe widget part ${i} explains routers, middleware and errors at some length.\n\n\`\`\`js\nwidget.part(${i});\n\`\`\`\n`).join('\n');
  for (let i = 0; i < total; i++) pages.set(`p${i}.md`, { content: `# Page ${i}\n\n${body}`, etag: `e${i}` });
  // The source yields documents it already holds (no I/O between them): only the kernel's own
  // yielding lets a timer run before the read is over.
  const job = await addLibrary(kernel, { source: 'scripted', name: 'long-read', spec: {} });
  let files = 0;
  const progressAtTicks: number[] = [];
  const tick = setInterval(() => progressAtTicks.push(files), 1);
  const done = await runIngestJob(kernel, job.job.id, { onProgress: (p) => (files = p.files) });
  clearInterval(tick);
  pages.clear();
  assert.equal(done.state, 'succeeded');
  assert.ok(
    progressAtTicks.some((f) => f > 0 && f < total),
    `a timer ran while the ${total} documents were read (files seen at each tick: ${[...new Set(progressAtTicks)].slice(0, 10).join(', ')})`,
  );
});
