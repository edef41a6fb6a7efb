import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKernel, type Kernel } from '../../../core/kernel.ts';
import { createConsoleLogger } from '../../../core/services.ts';
import { addLibrary, runIngestJob } from '../../../core/ingest.ts';
import { getContext, toContextJson } from '../../../core/query.ts';
import { makeSpace } from './fixtures.ts';
import { startFakeConfluence, type FakeConfluence } from './fake-confluence.ts';
import { API_TOKEN, EMAIL, PAT } from './helpers.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const builtin = (name: string) => join(ROOT, 'plugins', name, 'index.ts');

let dir: string;
let kernel: Kernel;
let fake: FakeConfluence;

before(async () => {
  fake = await startFakeConfluence({ space: makeSpace(), email: EMAIL, apiToken: API_TOKEN, pat: PAT });
  dir = mkdtempSync(join(tmpdir(), 'refdesk-confluence-'));
  const config = join(dir, 'refdesk.yaml');
  writeFileSync(
    config,
    `plugins:
  - use: ${builtin('store-embedded')}
  - use: ${builtin('chunker-markdown')}
  - use: ${builtin('source-confluence')}
    options:
      confluence:
        pageSize: 5
slots:
  store: embedded
  chunkers: [markdown]
  embedder: null
  reranker: null
network:
  allowHosts: ['127.0.0.1']
`,
  );
  kernel = await createKernel(config, { env: { dataDir: join(dir, 'data'), mode: 'writer' }, logger: createConsoleLogger('error', () => {}) });
  await kernel.open();
});

after(async () => {
  await kernel?.close();
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Confluence through the kernel', () => {
  test('add, ingest and query a Cloud space: the token is sealed at rest, answers carry the breadcrumb and code language', async () => {
    const { library, job } = await addLibrary(kernel, {
      source: 'confluence',
      spec: { siteUrl: fake.origin, spaceKey: 'ENG', deployment: 'cloud', email: EMAIL, apiToken: API_TOKEN },
    });
    const port = new URL(fake.origin).port;
    assert.equal(library.id, `/confluence/127_0_0_1_${port}_eng`);
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    assert.equal(done.progress.files, 15);

    const ctx = await getContext(kernel, { libraryId: library.id, query: 'bearer token Authorization header java HttpRequest' });
    const { codeSnippets } = toContextJson(ctx);
    const java = codeSnippets.find((s) => s.codeLanguage === 'java');
    assert.ok(java, `a java snippet answers: ${JSON.stringify(codeSnippets.map((s) => s.codeTitle))}`);
    assert.equal(java.breadcrumb, 'Engineering > API Guide > Authentication > Bearer tokens');
    assert.match(java.codeList[0].code, /\.header\("Authorization", "Bearer " \+ token\)/);
    assert.equal(java.source.url, `${fake.origin}/wiki/spaces/ENG/pages/106#bearer-tokens`);

    const compose = toContextJson(await getContext(kernel, { libraryId: library.id, query: 'docker compose broker image ports' })).codeSnippets.find((s) => s.codeLanguage === 'yaml');
    assert.ok(compose);
    assert.equal(compose.breadcrumb, 'Engineering > Getting Started > Installation > Docker Setup > Compose file');

    // The API token is sealed in the database file; the stored spec shows it only sealed.
    const stored = await kernel.store.getLibrary(library.id);
    assert.match(String(stored!.source.spec.apiToken), /^rdk-secret:v1:/);
    await kernel.close(); // flushes the database file
    // Every file of the data directory (the database, index segments, ...): no token in clear.
    const dataFiles = (readdirSync(join(dir, 'data'), { recursive: true }) as string[]).filter((f) => statSync(join(dir, 'data', f)).isFile());
    assert.ok(dataFiles.some((f) => f.endsWith('.sqlite')), `a database file in ${dataFiles.join(', ')}`);
    let snippetsSeen = false;
    for (const f of dataFiles) {
      const bytes = readFileSync(join(dir, 'data', f));
      assert.equal(bytes.indexOf(API_TOKEN), -1, `the API token is not in ${f} in clear`);
      assert.equal(bytes.indexOf(Buffer.from(`${EMAIL}:${API_TOKEN}`).toString('base64')), -1, f);
      if (bytes.indexOf('Bearer tokens') >= 0) snippetsSeen = true;
    }
    assert.ok(snippetsSeen, 'the snippets themselves are stored (in an index segment)');
  });
});
