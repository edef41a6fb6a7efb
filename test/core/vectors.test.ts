import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Kernel } from '../../core/kernel.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { getContext, toContextJson } from '../../core/query.ts';
import { searchLibraries } from '../../core/library-search.ts';
import { patchSettings } from '../../core/settings.ts';
import { createTestLogger } from '../../core/testing/index.ts';
import { EMBED_JOB_KIND, queueEmbeddings, readBuildVectorsMeta, removeOrphanVectors } from '../../core/vectors.ts';
import { readJobLog } from '../../core/job-log.ts';
import { startOpenAiEmbeddings, type EmbeddingServer } from '../helpers/embedding-servers.ts';
import { BASE_PLUGINS, openTestKernel, type TestKernel } from '../helpers/test-kernel.ts';

const KEY = 'sk-planted-vectors-SECRET-31337';
let dir: string;
let tk: TestKernel;
let kernel: Kernel;
let server: EmbeddingServer;
const logged: string[] = [];

before(async () => {
  const logger = createTestLogger();
  const capture = { ...logger, log: (level: never, message: string, fields?: Record<string, unknown>) => void logged.push(`${message} ${JSON.stringify(fields ?? {})}`) };
  for (const l of ['debug', 'info', 'warn', 'error'] as const) (capture as Record<string, unknown>)[l] = (m: string, f?: Record<string, unknown>) => capture.log(l as never, m, f);
  tk = await openTestKernel({
    prefix: 'refdesk-vectors-',
    plugins: [...BASE_PLUGINS, 'plugins/source-upload', { use: 'plugins/embedder-openai', options: { openai: { batchSize: 4, maxRetries: 1, retryBaseMs: 1, timeoutMs: 2000 } } }],
    mode: 'server',
    logger: capture,
  });
  ({ dir, kernel } = tk);
  server = await startOpenAiEmbeddings(undefined, { key: KEY });
});
after(async () => {
  await server?.close();
  await tk?.close();
});

async function setEmbedder(settings: Record<string, unknown> | null): Promise<void> {
  await patchSettings(kernel.store, kernel.secrets, { embedding: settings ?? { provider: null, apiKey: null, model: null, baseUrl: null } });
  kernel.providers.invalidate();
}

const embedding = (over: Record<string, unknown> = {}) => ({ provider: 'openai', baseUrl: `${server.base}/v1`, apiKey: KEY, model: 'loopback-hash', ...over });

function writeDocs(folder: string, files: Record<string, string>): void {
  mkdirSync(folder, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
}

const DOCS = {
  'routing.md': '# Routing\n\nRoutes map a path to a handler.\n\n```js\nrouter.get("/users/:id", show)\n```\n\n## Parameters\n\nNamed parameters are read from ctx.params.\n',
  'errors.md': '# Errors\n\nThrow an error with a status; the error handler answers it.\n\n## Error events\n\nThe app emits an error event for unhandled errors.\n',
  'cookies.md': '# Cookies\n\nRead and set cookies with ctx.cookies.get and ctx.cookies.set; signed cookies need keys.\n',
};

async function servedBuild(id: string): Promise<string> {
  return (await kernel.store.getVersion(id, ''))!.activeBuildId!;
}

function everything(): string {
  const jobs = join(dir, 'data');
  return logged.join('\n') + JSON.stringify(readdirSync(jobs));
}

test('vectors: without an embedder nothing changes; with one, ingest writes vectors (model, dimension) and answers are fused; turning it off gives the lexical answer back byte for byte', async () => {
  const folder = join(dir, 'lib-a');
  writeDocs(folder, DOCS);
  const { library, job } = await addLibrary(kernel, { source: 'upload', name: 'vec-a', spec: { path: folder } });
  assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
  assert.equal(existsSync(join(dir, 'data', 'vectors')), false, 'no embedder: no vectors');
  assert.equal(server.requests.length, 0);
  const query = 'how do I read route parameters';
  const lexical = JSON.stringify(toContextJson(await getContext(kernel, { libraryId: library.id, query })));

  await setEmbedder(embedding());
  const again = await addLibrary(kernel, { source: 'upload', name: 'vec-a', spec: { path: folder } });
  const done = await runIngestJob(kernel, again.job.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
  const meta = await readBuildVectorsMeta(kernel.env.dataDir, await servedBuild(library.id));
  assert.ok(meta);
  assert.equal(meta.model, 'loopback-hash');
  assert.equal(meta.dimensions, 256);
  assert.equal(meta.count, done.progress.snippets);
  assert.equal(meta.index, 'vectra', 'a small version goes into vectra');
  const log = (await kernel.store.getJobLog(again.job.id)).map((l) => l.message).join('\n');
  assert.match(log, /vectors written: \d+ x 256 \(loopback-hash/);

  const before = server.bodies.length;
  const hybrid = await getContext(kernel, { libraryId: library.id, query });
  assert.equal(server.bodies.length, before + 1, 'the question is embedded once');
  assert.deepEqual(server.bodies.at(-1)!.input, [query]);
  assert.ok(hybrid.snippets.some((s) => s.sourcePath === 'routing.md'));

  await setEmbedder(null);
  assert.equal(JSON.stringify(toContextJson(await getContext(kernel, { libraryId: library.id, query }))), lexical, 'no embedder: the lexical answer, unchanged');
  assert.equal(server.bodies.length, before + 1, 'no embedding call without an embedder');
});

test('vectors: a refresh embeds only changed snippets (the rest reused by content hash)', async () => {
  await setEmbedder(embedding());
  const folder = join(dir, 'lib-b');
  writeDocs(folder, DOCS);
  const { library, job } = await addLibrary(kernel, { source: 'upload', name: 'vec-b', spec: { path: folder } });
  const first = await runIngestJob(kernel, job.id);
  assert.equal(first.state, 'succeeded', JSON.stringify(first.error));
  const afterFirst = server.embeddedTexts;
  writeFileSync(join(folder, 'cookies.md'), '# Cookies\n\nCookies are read with ctx.cookies.get; this page changed.\n');
  const refresh = await addLibrary(kernel, { source: 'upload', name: 'vec-b', spec: { path: folder } });
  const second = await runIngestJob(kernel, refresh.job.id);
  assert.equal(second.state, 'succeeded');
  const embeddedNow = server.embeddedTexts - afterFirst;
  // the changed page's snippet(s) and the library vector; every other snippet reused
  assert.ok(embeddedNow <= 3, `embedded ${embeddedNow} texts on refresh`);
  const log = (await kernel.store.getJobLog(refresh.job.id)).map((l) => l.message).join('\n');
  assert.match(log, /unchanged \(vectors reused\)/);
  assert.equal(readdirSync(join(dir, 'data', 'vectors')).includes(first.id), false);
  const meta = await readBuildVectorsMeta(kernel.env.dataDir, await servedBuild(library.id));
  assert.equal(meta?.count, second.progress.snippets);
});

test('vectors: a refused key fails the job saying so; the served version keeps serving, the key appears nowhere', async () => {
  await setEmbedder(embedding());
  const folder = join(dir, 'lib-c');
  writeDocs(folder, DOCS);
  const { library, job } = await addLibrary(kernel, { source: 'upload', name: 'vec-c', spec: { path: folder } });
  assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
  const served = await servedBuild(library.id);
  const answer = JSON.stringify(toContextJson(await getContext(kernel, { libraryId: library.id, query: 'cookies' })));

  const WRONG = 'sk-planted-WRONG-key-424242';
  await setEmbedder(embedding({ apiKey: WRONG }));
  writeFileSync(join(folder, 'errors.md'), '# Errors\n\nA changed page.\n');
  const refresh = await addLibrary(kernel, { source: 'upload', name: 'vec-c', spec: { path: folder } });
  const failed = await runIngestJob(kernel, refresh.job.id);
  assert.equal(failed.state, 'failed');
  assert.equal(failed.error?.code, 'build_failed');
  assert.match(failed.error!.message, /refused the key \(HTTP 401\)/);
  assert.equal(await servedBuild(library.id), served, 'the previous build is still served');
  assert.ok(await readBuildVectorsMeta(kernel.env.dataDir, served), 'with its vectors');
  assert.equal(readdirSync(join(dir, 'data', 'vectors')).filter((n) => n.includes('partial')).length, 0);
  // A query now cannot embed the question (the key is refused): lexical answer, no error.
  await getContext(kernel, { libraryId: library.id, query: 'cookies' });
  const jobLog = JSON.stringify(await readJobLog(kernel.env.dataDir, refresh.job.id)) + JSON.stringify(await kernel.store.getJobLog(refresh.job.id));
  for (const text of [jobLog, JSON.stringify(failed), everything()]) {
    assert.ok(!text.includes(WRONG) && !text.includes(KEY), 'no key in logs, job logs or errors');
  }
  await setEmbedder(embedding());
  assert.equal(JSON.stringify(toContextJson(await getContext(kernel, { libraryId: library.id, query: 'cookies' }))), answer, 'the served version and its vectors answer as before');
  await setEmbedder(null);
});

test('vectors: turning an embedder on queues embed jobs; until they run the search is lexical; a model change never mixes vectors', async () => {
  await setEmbedder(null);
  const folder = join(dir, 'lib-d');
  writeDocs(folder, DOCS);
  const { library, job } = await addLibrary(kernel, { source: 'upload', name: 'vec-d', spec: { path: folder } });
  assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
  const query = 'error events';
  const lexical = JSON.stringify(toContextJson(await getContext(kernel, { libraryId: library.id, query })));

  await setEmbedder(embedding());
  const queued = await queueEmbeddings(kernel);
  const mine = [];
  for (const id of queued) {
    const j = (await kernel.store.getJob(id))!;
    assert.equal(j.kind, EMBED_JOB_KIND);
    if (j.libraryId === library.id) mine.push(j);
  }
  assert.equal(mine.length, 1);
  assert.deepEqual(await queueEmbeddings(kernel), [], 'not queued twice while pending');
  const calls = server.bodies.length;
  assert.equal(JSON.stringify(toContextJson(await getContext(kernel, { libraryId: library.id, query }))), lexical, 'no vectors yet: lexical');
  assert.equal(server.bodies.length, calls, 'no question embedded for a version without vectors');

  for (const id of queued) assert.equal((await runIngestJob(kernel, id)).state, 'succeeded');
  const calls1 = server.bodies.length;
  const log = (await kernel.store.getJobLog(mine[0].id)).map((l) => l.message).join('\n');
  assert.match(log, /queued: embedding \/docs\/vec-d with loopback-hash \(it has no vectors\)/);
  assert.match(log, /vectors written/);
  assert.equal((await readBuildVectorsMeta(kernel.env.dataDir, await servedBuild(library.id)))?.model, 'loopback-hash');
  await getContext(kernel, { libraryId: library.id, query });
  assert.equal(server.bodies.length, calls1 + 1, 'now the question is embedded');

  // Another model: the old vectors are ignored (lexical) until the new embed job ran.
  await setEmbedder(embedding({ model: 'loopback-hash-v2' }));
  const calls2 = server.bodies.length;
  assert.equal(JSON.stringify(toContextJson(await getContext(kernel, { libraryId: library.id, query }))), lexical);
  assert.equal(server.bodies.length, calls2);
  const again = await queueEmbeddings(kernel);
  assert.ok(again.length >= 1);
  for (const id of again) assert.equal((await runIngestJob(kernel, id)).state, 'succeeded');
  assert.equal((await readBuildVectorsMeta(kernel.env.dataDir, await servedBuild(library.id)))?.model, 'loopback-hash-v2');
  await setEmbedder(null);
});

test('vectors: an embedding endpoint failing at query time degrades to the lexical answer (logged without the key)', async () => {
  await setEmbedder(embedding());
  const folder = join(dir, 'lib-e');
  writeDocs(folder, DOCS);
  const { library, job } = await addLibrary(kernel, { source: 'upload', name: 'vec-e', spec: { path: folder } });
  assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
  await setEmbedder(null);
  const lexical = JSON.stringify(toContextJson(await getContext(kernel, { libraryId: library.id, query: 'signed cookies keys' })));
  await setEmbedder(embedding());
  server.script.push({ status: 503, body: '{"error":{"message":"down","type":"server_error","param":null,"code":null}}' }, { status: 503, body: '{}' });
  assert.equal(JSON.stringify(toContextJson(await getContext(kernel, { libraryId: library.id, query: 'signed cookies keys' }))), lexical);
  assert.ok(logged.some((l) => l.includes('could not be embedded') && l.includes('unavailable')));
  server.script.push({ body: '{"object":"list","data":[{"object":"embedding","ind' });
  assert.equal(JSON.stringify(toContextJson(await getContext(kernel, { libraryId: library.id, query: 'cookies signed keys' }))).length > 0, true);
  assert.ok(!everything().includes(KEY));
  await setEmbedder(null);
});

test('library search: with an embedder, library vectors (title, description, top headings) are fused with the name ranking; without, unchanged', async () => {
  await setEmbedder(embedding());
  const folder = join(dir, 'lib-f');
  writeDocs(folder, { 'jar.md': '# Cookie jar\n\nStore cookies in a jar.\n\n## Signed cookies\n\nSigning keys rotate.\n' });
  const { job } = await addLibrary(kernel, { source: 'upload', name: 'vec-f', title: 'Jar', description: 'Keeps cookies fresh.', spec: { path: folder } });
  assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
  const log = (await kernel.store.getJobLog(job.id)).map((l) => l.message).join('\n');
  assert.match(log, /library vector written \(title, description and 2 top headings\)/);

  await setEmbedder(null);
  const name = 'qqq-no-such-name';
  assert.deepEqual(await searchLibraries(kernel, name, 'cookie jar signed cookies', { fast: true }), [], 'no embedder: no name match, no result');
  const exact = (await searchLibraries(kernel, 'vec-f', 'cookies', { fast: true })).map((r) => r.library.id);

  await setEmbedder(embedding());
  const calls = server.bodies.length;
  const found = (await searchLibraries(kernel, name, 'cookie jar signed cookies', { fast: true })).map((r) => r.library.id);
  assert.equal(server.bodies.length, calls + 1, 'the name and question embedded once');
  assert.deepEqual(server.bodies.at(-1)!.input, [`${name}\ncookie jar signed cookies`]);
  assert.equal(found[0], '/docs/vec-f', `the library whose headings match comes first: ${found.join(', ')}`);
  assert.ok(found.length <= 3, 'at most three libraries join on their vectors alone');
  assert.equal((await searchLibraries(kernel, 'vec-f', 'cookies', { fast: true }))[0].library.id, exact[0], 'an exact ID still comes first');
  await setEmbedder(null);
});

test('vectors: at start, vectors of builds no version serves are removed; served builds and library vectors stay (one catalog read, or version by version)', async () => {
  const vectors = join(dir, 'data', 'vectors');
  const served = await servedBuild('/docs/vec-b');
  assert.ok(existsSync(join(vectors, served)), 'a served build with vectors (from the tests above)');
  const before = readdirSync(vectors).sort();
  const plant = (name: string) => {
    mkdirSync(join(vectors, name), { recursive: true });
    writeFileSync(join(vectors, name, 'meta.json'), '{}');
  };
  plant('0f0e0d0c-orphan-build-one');
  assert.deepEqual(await removeOrphanVectors(kernel), ['0f0e0d0c-orphan-build-one']);
  assert.deepEqual(readdirSync(vectors).sort(), before);
  // A store without servedBuildChunkers (optional) is read version by version: the same outcome.
  assert.equal(typeof kernel.store.servedBuildChunkers, 'function');
  const store = new Proxy(kernel.store, { get: (target, name) => (name === 'servedBuildChunkers' ? undefined : (Reflect.get(target, name, target) as unknown)) });
  const byVersion = new Proxy(kernel, { get: (target, name) => (name === 'store' ? store : (Reflect.get(target, name, target) as unknown)) });
  plant('0f0e0d0c-orphan-build-two');
  assert.deepEqual(await removeOrphanVectors(byVersion), ['0f0e0d0c-orphan-build-two']);
  assert.deepEqual(readdirSync(vectors).sort(), before);
});
