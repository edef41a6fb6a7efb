import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { runSource } from '../../../core/testing/run-source.ts';
import type { Snippet, SourceDocument } from '../../../core/contracts.ts';
import { MarkdownChunker } from '../../../plugins/chunker-markdown/markdown-chunker.ts';
import { corpusFile, hasCorpora } from '../../helpers/corpora.ts';
import { makeDataDir, makeSource, snippetsOf } from './helpers.ts';

const skip = hasCorpora ? false : 'shared corpora not present';

/** The JSON after `-d '` in a curl command (single-quoted, with '\'' escapes). */
function curlBody(code: string): unknown {
  const m = /-d '((?:[^']|'\\'')*)'/.exec(code);
  assert.ok(m, `no -d body in ${code}`);
  return JSON.parse(m[1].replace(/'\\''/g, "'"));
}

describe('source-openapi: snippets of the OpenAI spec (3 MB, OpenAPI 3.1)', { skip }, () => {
  const data = makeDataDir();
  let docs: SourceDocument[] = [];
  let snippets: Snippet[] = [];
  before(async () => {
    data.put('openai.yaml', corpusFile('fixtures', 'openai-openapi/openapi.yaml'));
    docs = (await runSource(makeSource(data.dataDir), { path: 'openai.yaml' })).documents;
    snippets = snippetsOf(docs);
  });
  after(() => data.cleanup());

  test('288 operations give 288 code snippets, each titled "METHOD /path — name"', () => {
    const code = snippets.filter((s) => s.type === 'code');
    assert.equal(code.length, 288);
    for (const s of code) assert.match(s.title, /^(GET|PUT|POST|DELETE|PATCH|HEAD|OPTIONS|TRACE) \/v1\/\S* — \S/);
    assert.equal(new Set(code.map((s) => s.title.split(' — ')[0])).size, 288, 'every operation once');
    assert.ok(code.every((s) => s.language === 'bash' && s.code.startsWith('curl -X ')));
  });

  test('the chat completion operation: summary, body fields, responses, auth and a runnable curl', () => {
    const s = snippets.find((x) => x.title === 'POST /v1/chat/completions — Create chat completion');
    assert.ok(s, 'the operation snippet exists');
    assert.equal(s.sourcePath, 'tags/chat.md');
    assert.deepEqual(s.breadcrumb, ['OpenAI API: Chat', 'POST /v1/chat/completions — Create chat completion']);
    assert.match(s.description, /Creates a model response for the given chat conversation/);
    assert.match(s.description, /Request body \(`application\/json`, required\): `CreateChatCompletionRequest`/);
    assert.match(s.description, /- `messages` \(`ChatCompletionRequestMessage\[\]`, required\): A list of messages/);
    assert.match(s.description, /- `model` \(`string \| \('gpt-[^`]*… \(\+\d+\)\)`, required\)/, 'long enums are shortened');
    assert.match(s.description, /- `temperature` \(`number \| null`, optional\)/);
    assert.match(s.description, /Responses:\n- `200` OK \(`application\/json`\): `CreateChatCompletionResponse \{ id: string; choices: \{…\}\[\];/);
    assert.match(s.description, /Authentication: `ApiKeyAuth` \(bearer token\)/);
    assert.match(s.code, /^curl -X POST 'https:\/\/api\.openai\.com\/v1\/chat\/completions' \\\n {2}-H "Authorization: Bearer \$API_TOKEN" \\\n {2}-H 'Content-Type: application\/json' \\\n {2}-d '/);
    const body = curlBody(s.code) as { model: unknown; messages: Array<{ role: string; content: unknown }> };
    assert.equal(typeof body.model, 'string');
    assert.ok(Array.isArray(body.messages) && body.messages.length === 1 && typeof body.messages[0].role === 'string');
    // The line range covers the section in the rendered document.
    const doc = docs.find((d) => d.path === 'tags/chat.md')!;
    const lines = doc.content.split('\n');
    assert.equal(lines[s.lineStart - 1], '## POST /v1/chat/completions — Create chat completion');
    assert.equal(lines[s.lineEnd - 1], '```');
  });

  test('info snippets: the overview, authentication, and one per tag with its operations', () => {
    const info = snippets.filter((s) => s.type === 'info');
    const overview = info.find((s) => s.sourcePath === 'index.md' && s.title === 'OpenAI API');
    assert.ok(overview);
    assert.match(overview.content, /OpenAI API version 2\.3\.0, an OpenAPI 3\.1 API with 288 operations/);
    assert.match(overview.content, /Servers:\n- `https:\/\/api\.openai\.com\/v1`/);
    const auth = info.find((s) => s.title === 'Authentication');
    assert.ok(auth);
    assert.match(auth.content, /`ApiKeyAuth`: HTTP bearer token: `Authorization: Bearer <token>`/);
    assert.match(auth.content, /Every operation uses `ApiKeyAuth` unless it says otherwise/);
    const chat = info.find((s) => s.title === 'OpenAI API: Chat');
    assert.ok(chat);
    assert.match(chat.content, /Given a list of messages comprising a conversation/);
    assert.match(chat.content, /- `POST \/v1\/chat\/completions`: Create chat completion/);
    const tagDocs = docs.filter((d) => d.path.startsWith('tags/'));
    for (const d of tagDocs) assert.ok(info.some((s) => s.sourcePath === d.path && s.breadcrumb.length === 1), `${d.path} has its tag snippet`);
    assert.equal(info.filter((s) => s.breadcrumb.length === 2).length, 1, 'no info snippet per operation: only Authentication');
  });

  test('degraded: without the openapi chunker, the markdown chunker still makes one code snippet per operation', () => {
    const md = new MarkdownChunker({ maxInfoTokens: 400, maxDescriptionChars: 600 });
    const chat = docs.find((d) => d.path === 'tags/chat.md')!;
    const code = md.chunk(chat).filter((s) => s.type === 'code');
    const ours = snippetsOf([chat]).filter((s) => s.type === 'code');
    assert.deepEqual(code.map((s) => s.title), ours.map((s) => s.title));
    assert.deepEqual(code.map((s) => s.code), ours.map((s) => s.code));
  });
});

describe('source-openapi: petstore snippets', { skip }, () => {
  const data = makeDataDir();
  after(() => data.cleanup());

  test('path parameters take <name> placeholders, enums and defaults show in parameters, JSON and binary bodies', async () => {
    data.put('petstore.yaml', corpusFile('fixtures', 'swagger-petstore/openapi.yaml'));
    const code = snippetsOf((await runSource(makeSource(data.dataDir), { path: 'petstore.yaml' })).documents).filter((s) => s.type === 'code');
    const byTitle = new Map(code.map((s) => [s.title, s]));
    const find = byTitle.get('GET /api/v3/pet/findByStatus — Finds Pets by status')!;
    assert.match(find.description, /`status` \(query, 'available' \| 'pending' \| 'sold', optional, default "available"\): Status values/);
    assert.match(find.code, /^curl -X GET 'https:\/\/petstore3\.swagger\.io\/api\/v3\/pet\/findByStatus'/);
    const get = byTitle.get('GET /api/v3/pet/{petId} — Find pet by ID')!;
    assert.match(get.code, /\/pet\/<petId>'/);
    assert.match(get.code, /-H "api_key: \$API_KEY"/);
    const order = byTitle.get('POST /api/v3/store/order — Place an order for a pet')!;
    const body = curlBody(order.code) as Record<string, unknown>;
    assert.ok(body && typeof body === 'object');
    const upload = byTitle.get('POST /api/v3/pet/{petId}/uploadImage — Uploads an image')!;
    assert.match(upload.description, /Request body \(`application\/octet-stream`, optional\): `string<binary>`/);
    assert.match(upload.code, /-H 'Content-Type: application\/octet-stream' \\\n {2}--data-binary '@body\.bin'$/);
    assert.ok(code.every((s) => !/\{[a-zA-Z]+\}/.test(s.code.split('\n')[0])), 'no curl URL keeps a {param} (curl would glob it)');
  });
});
