import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { runSource } from '../../../core/testing/run-source.ts';
import { runSourceContract } from '../../../core/testing/source-contract.ts';
import { RefdeskError } from '../../../core/errors.ts';
import type { PreviousDocument, SourceDocument } from '../../../core/contracts.ts';
import { deriveOpenApiId } from '../../../plugins/source-openapi/derive-id.ts';
import { corpusFile, hasCorpora } from '../../helpers/corpora.ts';
import { SpecServer, SWAGGER_2, OPENAPI_31_CIRCULAR, codeSnippets, makeDataDir, makeSource } from './helpers.ts';

const skip = hasCorpora ? false : 'shared corpora not present';

async function refused(p: Promise<unknown>, code: string, status: number, ...parts: Array<string | RegExp>): Promise<RefdeskError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof RefdeskError, `expected a RefdeskError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    assert.equal(e.status, status);
    for (const part of parts) {
      if (typeof part === 'string') assert.ok(e.message.includes(part), `message "${e.message}" should mention ${part}`);
      else assert.match(e.message, part);
    }
    return e;
  }
  assert.fail(`expected a ${code} error`);
}

function asPrevious(docs: SourceDocument[]): Map<string, PreviousDocument> {
  return new Map(docs.map((d) => [d.path, { hash: d.hash!, meta: d.meta ?? {} }]));
}

describe('source-openapi: reading specs', () => {
  const server = new SpecServer();
  const data = makeDataDir();
  before(async () => {
    await server.start();
    if (hasCorpora) {
      server.routes.set('/petstore/openapi.yaml', { body: corpusFile('fixtures', 'swagger-petstore/openapi.yaml'), type: 'application/yaml', etag: '"pet-1"', conditional: true });
    }
    server.routes.set('/todo/swagger.json', { body: JSON.stringify(SWAGGER_2) });
  });
  after(async () => {
    await server.stop();
    data.cleanup();
  });

  test('a YAML spec by URL (OpenAPI 3.0): one document per tag plus the overview, one code snippet per operation', { skip }, async () => {
    const { documents, logs } = await runSource(makeSource(data.dataDir), { url: `${server.base}/petstore/openapi.yaml` });
    assert.deepEqual(documents.map((d) => d.path), ['index.md', 'tags/pet.md', 'tags/store.md', 'tags/user.md']);
    assert.ok(documents.every((d) => d.format === 'openapi-markdown' && typeof d.hash === 'string' && d.meta?.etag === '"pet-1"'));
    assert.equal(codeSnippets(documents).length, 19);
    assert.ok(logs.some((l) => /openapi-3\.0: 19 operations in 3 tags/.test(l.message)));
    assert.equal(server.requests.filter((r) => r.path === '/petstore/openapi.yaml').length, 1);
  });

  test('a JSON spec uploaded under <dataDir>/uploads, by relative or absolute path', { skip }, async () => {
    const file = data.put('context7.json', corpusFile('fixtures', 'context7/openapi.json'));
    for (const path of ['context7.json', file]) {
      const { documents } = await runSource(makeSource(data.dataDir), { path });
      const code = codeSnippets(documents);
      assert.equal(code.length, 16);
      assert.ok(code.some((s) => s.title === 'GET /api/v2/libs/search — Search for libraries'));
      assert.match(documents[0].content, /from the uploaded file context7\.json/);
    }
  });

  test("the library is named by the spec's info.title and info.description", async () => {
    const { meta } = await runSource(makeSource(data.dataDir), { url: `${server.base}/todo/swagger.json` });
    assert.equal(meta.title, 'Todo API');
    assert.equal(meta.description, 'Keeps a list of things to do.');
  });

  test('Swagger 2.0: host + basePath, body and formData parameters, basic and apiKey auth', async () => {
    const { documents } = await runSource(makeSource(data.dataDir), { url: `${server.base}/todo/swagger.json` });
    const code = codeSnippets(documents);
    assert.deepEqual(code.map((s) => s.title), [
      'GET /v1/todos/{todoId} — Get one todo',
      'PUT /v1/todos/{todoId} — Replace a todo',
      'POST /v1/todos/{todoId}/attachment — Upload attachment',
    ]);
    const [get, put, upload] = code;
    assert.match(get.code, /^curl -X GET 'https:\/\/todo\.example\.com\/v1\/todos\/42\?expand=owner'/);
    assert.match(get.code, /-H "X-Todo-Key: \$API_KEY"/);
    assert.match(get.description, /`expand` \(query, 'owner' \| 'tags', required\)/);
    assert.match(get.description, /`200` The todo \(`application\/json`\): `Todo \{ id\?: integer<int64>; title: string; done\?: boolean; priority\?: 'low' \| 'normal' \| 'high' \| 'urgent' \| 'later' \| 'someday' \| … \(\+2\) \}`/);
    assert.match(put.code, /-u "\$API_USER:\$API_PASSWORD"/);
    assert.match(put.code, /-d '\{"title":"Buy milk"\}'/, 'the body keeps required fields with their examples and leaves read-only ones out');
    assert.match(put.description, /Request body \(`application\/json`, required\): `Todo`/);
    assert.match(upload.code, /-F 'file=@file\.bin'/);
    assert.match(upload.description, /`file` \(`string<binary>`, required\): The file to attach/);
    const index = documents.find((d) => d.path === 'index.md')!;
    assert.match(index.content, /Todo API version 1\.2\.0, an Swagger 2\.0 API with 3 operations/);
    assert.match(index.content, /`basicAuth`: HTTP basic authentication/);
    assert.match(index.content, /`key`: API key in the header `X-Todo-Key`/);
  });

  test('OpenAPI 3.1 with a circular schema: the read ends, and the cycle prints as <circular: Node>', async () => {
    data.put('tree.yaml', toYaml(OPENAPI_31_CIRCULAR));
    const { documents } = await runSource(makeSource(data.dataDir), { path: 'tree.yaml' });
    const [create, get] = codeSnippets(documents);
    assert.equal(create.title, 'POST /api/nodes — Create a node');
    assert.match(create.description, /`parent` \(`<circular: Node>`, optional\)/);
    assert.match(create.description, /`children` \(`<circular: Node>\[\]`, optional\)/);
    assert.match(create.description, /`note` \(`string \| null`, optional\)/);
    assert.match(create.description, /`201` Created \(`application\/json`\): `Node \{ name: string; parent\?: <circular: Node>; children\?: <circular: Node>\[\]; note\?: string \| null \}`/);
    assert.match(create.code, /^curl -X POST 'https:\/\/eu\.tree\.example\.com\/api\/nodes' \\\n {2}-H "Authorization: Bearer \$API_TOKEN"/);
    assert.match(create.code, /-d '\{"name":"string"\}'/);
    assert.equal(get.title, 'GET /api/nodes/{name} — Get node');
    assert.match(get.code, /\/api\/nodes\/<name>'/);
  });

  test('an invalid spec is a 400 invalid_source that says where (JSON pointer and line)', async () => {
    const broken = toYaml({
      openapi: '3.0.3',
      info: { title: 'Broken', version: '1' },
      paths: { '/pets': { get: { summary: 'List pets', parameters: [{ name: 'limit', in: 'nowhere' }] } } },
    });
    data.put('broken.yaml', broken);
    const e = await refused(runSource(makeSource(data.dataDir), { path: 'broken.yaml' }), 'invalid_source', 400, 'not a valid OpenAPI document');
    assert.match(e.message, /at \/paths\/~1pets\/get \(line 8\): missing required property "responses"/);
    assert.match(e.message, /at \/paths\/~1pets\/get\/parameters\/0\/in \(line \d+\): must be one of "path", "query", "header", "cookie"/);
    // Swagger 2.0 rules beyond the schema: a path parameter the operation does not declare.
    data.put('missing-param.json', JSON.stringify({ swagger: '2.0', info: { title: 'x', version: '1' }, paths: { '/pets/{id}': { get: { responses: { '200': { description: 'ok' } } } } } }));
    await refused(runSource(makeSource(data.dataDir), { path: 'missing-param.json' }), 'invalid_source', 400, '/pets/{id}', 'missing path parameter');
    data.put('dangling.json', JSON.stringify({ openapi: '3.0.0', info: { title: 'x', version: '1' }, paths: { '/a': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Nope' } } } } } } } } }));
    await refused(runSource(makeSource(data.dataDir), { path: 'dangling.json' }), 'invalid_source', 400, '#/components/schemas/Nope', 'does not exist');
  });

  test('text that is not an OpenAPI document gets a clear 400', async () => {
    data.put('bad.json', '{"openapi": "3.0.0", "info": ');
    await refused(runSource(makeSource(data.dataDir), { path: 'bad.json' }), 'invalid_source', 400, 'not valid JSON', 'line 1');
    data.put('bad.yaml', 'openapi: 3.0.0\ninfo: [unclosed\n');
    await refused(runSource(makeSource(data.dataDir), { path: 'bad.yaml' }), 'invalid_source', 400, 'neither valid JSON nor valid YAML');
    data.put('plain.json', '{"hello": "world"}');
    await refused(runSource(makeSource(data.dataDir), { path: 'plain.json' }), 'invalid_source', 400, 'neither an "openapi" nor a "swagger" field');
    data.put('old.json', '{"swagger": "1.2", "apis": []}');
    await refused(runSource(makeSource(data.dataDir), { path: 'old.json' }), 'invalid_source', 400, 'Swagger 2.0 and OpenAPI 3.0/3.1');
    data.put('empty.json', JSON.stringify({ openapi: '3.1.0', info: { title: 'x', version: '1' }, paths: {} }));
    await refused(runSource(makeSource(data.dataDir), { path: 'empty.json' }), 'no_documentation', 422, 'no operations');
  });

  test('external $refs are refused with the reference and where it is; nothing else is fetched', async () => {
    server.routes.set('/ext/pet.yaml', { body: 'type: object\n', type: 'application/yaml' });
    server.routes.set('/ext/openapi.json', {
      body: JSON.stringify({
        openapi: '3.0.0',
        info: { title: 'x', version: '1' },
        paths: { '/pets': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: 'pet.yaml' } } } } } } } },
      }),
    });
    await refused(
      runSource(makeSource(data.dataDir), { url: `${server.base}/ext/openapi.json` }),
      'invalid_source',
      400,
      'external $ref "pet.yaml"',
      '/paths/~1pets/get/responses/200/content/application~1json/schema',
      'bundle',
    );
    assert.equal(server.requests.filter((r) => r.path === '/ext/pet.yaml').length, 0);
  });

  test('a path outside the uploads folder is refused (absolute, .., symbolic link)', async () => {
    const outside = join(data.dataDir, 'secret.json');
    writeFileSync(outside, JSON.stringify(SWAGGER_2));
    symlinkSync(outside, join(data.uploads, 'link.json'));
    for (const path of [outside, '../secret.json', 'link.json', '/etc/passwd']) {
      await refused(runSource(makeSource(data.dataDir), { path }), 'forbidden', 403, 'inside the uploads folder');
    }
    await refused(runSource(makeSource(data.dataDir), { path: 'nope.json' }), 'invalid_source', 400, 'not found in the uploads folder');
  });

  test('size cap: a spec over maxSpecBytes is a 422 too_large, by URL and by path', async () => {
    await refused(runSource(makeSource(data.dataDir, { maxSpecBytes: 100 }), { url: `${server.base}/todo/swagger.json` }), 'too_large', 422, 'maxSpecBytes');
    data.put('todo.json', JSON.stringify(SWAGGER_2));
    await refused(runSource(makeSource(data.dataDir, { maxSpecBytes: 100 }), { path: 'todo.json' }), 'too_large', 422, 'maxSpecBytes');
    await refused(runSource(makeSource(data.dataDir, { maxOperations: 2 }), { path: 'todo.json' }), 'too_large', 422, '3 operations', 'maxOperations');
  });

  test('HTTP errors: a 404 says so at once; a 500 is retried, then fails clearly', async () => {
    await refused(runSource(makeSource(data.dataDir), { url: `${server.base}/missing.json?token=s3cret` }), 'invalid_source', 400, 'answered 404', `${server.base}/missing.json`);
    server.routes.set('/flaky.json', { status: 503, body: 'busy' });
    const before = server.requests.length;
    const e = await refused(runSource(makeSource(data.dataDir, { fetchAttempts: 2 }), { url: `${server.base}/flaky.json` }), 'invalid_source', 400, 'after 2 attempts', 'answered 503');
    assert.equal(server.requests.length - before, 2);
    assert.ok(!e.message.includes('s3cret'));
  });

  test('refresh: an unchanged spec (304 or same content) yields every document as unchanged', { skip }, async () => {
    const url = `${server.base}/petstore/openapi.yaml`;
    const first = await runSource(makeSource(data.dataDir), { url });
    const again = await runSource(makeSource(data.dataDir), { url }, { previous: asPrevious(first.documents) });
    assert.equal(server.requests.at(-1)!.headers['if-none-match'], '"pet-1"');
    assert.deepEqual(again.documents.map((d) => [d.path, d.unchanged, d.content]), first.documents.map((d) => [d.path, true, '']));
    assert.ok(again.logs.some((l) => /HTTP 304/.test(l.message)));

    // No ETag: the content hash decides.
    const todo = `${server.base}/todo/swagger.json`;
    const a = await runSource(makeSource(data.dataDir), { url: todo });
    const b = await runSource(makeSource(data.dataDir), { url: todo }, { previous: asPrevious(a.documents) });
    assert.ok(b.documents.every((d) => d.unchanged === true));
    server.routes.set('/todo/swagger.json', { body: JSON.stringify({ ...SWAGGER_2, info: { ...SWAGGER_2.info, title: 'Todo API v2' } }) });
    const c = await runSource(makeSource(data.dataDir), { url: todo }, { previous: asPrevious(a.documents) });
    assert.ok(c.documents.every((d) => !d.unchanged && d.content.length > 0));
    assert.match(c.documents[0].content, /^# Todo API v2/);
    server.routes.set('/todo/swagger.json', { body: JSON.stringify(SWAGGER_2) });
  });

  test('the spec needs exactly one of url and path', async () => {
    await refused(runSource(makeSource(data.dataDir), { url: `${server.base}/todo/swagger.json`, path: 'x.json' }), 'invalid_request', 400, 'exactly one of');
    await refused(runSource(makeSource(data.dataDir), {}), 'invalid_request', 400, 'exactly one of');
  });
});

describe('source-openapi: library IDs', () => {
  test('a URL spec gets /openapi/<host>_<path slug>; an upload needs a name', () => {
    assert.equal(deriveOpenApiId({ url: 'https://petstore3.swagger.io/api/v3/openapi.json' }), '/openapi/petstore3_swagger_io_api_v3_openapi.json');
    assert.equal(deriveOpenApiId({ url: 'https://api.example.com/' }), '/openapi/api_example_com');
    assert.equal(deriveOpenApiId({ url: 'https://x.io/a%20b/spec.yaml?x=1' }), '/openapi/x_io_a-b_spec.yaml');
    assert.throws(() => deriveOpenApiId({ path: 'spec.yaml' }), /needs a library name/);
  });
});

const contractServer = new SpecServer();
const contractData = makeDataDir();
runSourceContract('openapi (URL)', async () => {
  if (!contractServer.base) {
    await contractServer.start();
    contractServer.routes.set('/todo.json', { body: JSON.stringify(SWAGGER_2) });
  }
  return { source: makeSource(contractData.dataDir), spec: { url: `${contractServer.base}/todo.json` } };
});
after(async () => {
  await contractServer.stop();
  contractData.cleanup();
});
