import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKernel, type Kernel } from '../../../core/kernel.ts';
import { createConsoleLogger } from '../../../core/services.ts';
import { addLibrary, runIngestJob } from '../../../core/ingest.ts';
import { getContext } from '../../../core/query.ts';
import { readJobLog } from '../../../core/job-log.ts';
import { RefdeskError } from '../../../core/errors.ts';
import { corpusFile, hasCorpora } from '../../helpers/corpora.ts';
import { SpecServer, makeDataDir } from './helpers.ts';

const PLUGINS = fileURLToPath(new URL('../../../plugins/', import.meta.url));

describe('source-openapi through the kernel', { skip: hasCorpora ? false : 'shared corpora not present' }, () => {
  const data = makeDataDir();
  const server = new SpecServer();
  let kernel: Kernel;

  before(async () => {
    await server.start();
    server.routes.set('/openai/openapi.yaml', { body: corpusFile('fixtures', 'openai-openapi/openapi.yaml'), type: 'application/yaml' });
    const config = join(data.dataDir, 'refdesk.yaml');
    writeFileSync(
      config,
      [
        'plugins:',
        `  - use: ${JSON.stringify(join(PLUGINS, 'store-embedded/index.ts'))}`,
        `  - use: ${JSON.stringify(join(PLUGINS, 'chunker-markdown/index.ts'))}`,
        `  - use: ${JSON.stringify(join(PLUGINS, 'source-openapi/index.ts'))}`,
        '    options:',
        '      openapi:',
        '        maxSpecBytes: 20971520',
        'slots:',
        '  store: embedded',
        '  chunkers: [markdown, openapi-operations]',
        '  embedder: null',
        '  reranker: null',
        'query:',
        '  defaultTokens: 5000',
        '  minTokens: 500',
        '  maxTokens: 100000',
        'network:',
        "  allowHosts: ['127.0.0.1']",
        '  allowPrivateNetworks: false',
        '  maxResponseBytes: 52428800',
        '  timeoutMs: 30000',
        '',
      ].join('\n'),
    );
    kernel = await createKernel(config, { env: { dataDir: data.dataDir, mode: 'writer' }, logger: createConsoleLogger('error', () => {}) });
    await kernel.open();
  });

  after(async () => {
    await kernel?.close();
    await server.stop();
    data.cleanup();
  });

  test('addLibrary + runIngestJob + getContext: "how do I create a chat completion" answers with that operation', async () => {
    const url = `${server.base}/openai/openapi.yaml`;
    const { library, job } = await addLibrary(kernel, { source: 'openapi', spec: { url } });
    assert.equal(library.id, `/openapi/127_0_0_1_${new URL(server.base).port}_openai_openapi.yaml`);
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    assert.equal(done.progress.files, 38);
    const snippets = await kernel.store.getSnippets(library.id, '');
    assert.equal(snippets.filter((s) => s.type === 'code').length, 288);

    const result = await getContext(kernel, { libraryId: library.id, query: 'how do I create a chat completion' });
    const top = result.snippets.slice(0, 3);
    assert.ok(top.every((s) => s.sourcePath === 'tags/chat.md'), 'the best answers are chat operations');
    // Known limit of the lexical ranking (core/search): "create" is in most operations of this
    // API, so "Get chat completion" scores within 1% of "Create chat completion" and may come
    // first; the operation is in the top three.
    const create = top.find((s) => s.title === 'POST /v1/chat/completions — Create chat completion');
    assert.ok(create, `top three: ${top.map((s) => s.title).join(' | ')}`);
    assert.equal(create.type, 'code');
    assert.match(create.code, /^curl -X POST 'https:\/\/api\.openai\.com\/v1\/chat\/completions'/);
    assert.match(create.description, /`messages` \(`ChatCompletionRequestMessage\[\]`, required\)/);
  });

  test('an invalid spec fails the job with a 4xx code that says where, and nothing is served', async () => {
    server.routes.set('/broken.json', { body: JSON.stringify({ openapi: '3.0.0', info: { title: 'x' }, paths: {} }) });
    const { library, job } = await addLibrary(kernel, { source: 'openapi', name: 'broken', spec: { url: `${server.base}/broken.json` } });
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'failed');
    assert.equal(done.error?.code, 'invalid_source');
    assert.match(done.error!.message, /at \/info \(line 1\): missing required property "version"/);
    await assert.rejects(getContext(kernel, { libraryId: library.id, query: 'anything' }), (e: unknown) => e instanceof RefdeskError && e.status < 500);
  });

  test('the job log lines about the spec carry its address as their path (without its query)', async () => {
    server.routes.set('/small.json', { body: JSON.stringify({ openapi: '3.0.0', info: { title: 'Small', version: '1' }, paths: { '/things': { get: { summary: 'List things', responses: { '200': { description: 'ok' } } } } } }) });
    const { job } = await addLibrary(kernel, { source: 'openapi', name: 'small', spec: { url: `${server.base}/small.json?sig=planted-query-secret` } });
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    const lines = await readJobLog(data.dataDir, job.id);
    const rendered = lines.find((l) => /: 1 operations in \d+ tags, validated and rendered/.test(l.message));
    assert.equal(rendered?.path, `${server.base}/small.json`, JSON.stringify(lines));
    assert.ok(!JSON.stringify(lines).includes('planted-query-secret'));
  });

  test('a spec naming both url and path is refused before any job is queued', async () => {
    await assert.rejects(addLibrary(kernel, { source: 'openapi', name: 'both', spec: { url: `${server.base}/x.json`, path: 'x.json' } }), (e: unknown) => e instanceof RefdeskError && e.code === 'invalid_request');
    assert.equal(await kernel.store.getLibrary('/openapi/both'), null);
  });
});
