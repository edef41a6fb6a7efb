/**
 * Loopback servers shaped like the vendors' embedding APIs, answering with the deterministic
 * hash embedding (test/helpers/hash-embedding.ts):
 *
 * - OpenAI: `POST <base>/embeddings` {model, input: string | string[], encoding_format?:
 *   'float' | 'base64', dimensions?} -> {object: 'list', data: [{object: 'embedding', index,
 *   embedding}], model, usage}; base64 is the little-endian float32 bytes, as the SDK asks by
 *   default. Errors are {error: {message, type, param, code}} with the vendor's statuses.
 * - Gemini: `POST <base>/v1beta/models/<model>:batchEmbedContents` {requests: [{model, content:
 *   {parts: [{text}]}, taskType}]} -> {embeddings: [{values}]}; errors {error: {code, message,
 *   status}}.
 *
 * A test scripts misbehaviour per request with `script` (status + headers + raw body, a delay,
 * a cut-off body); requests are counted and recorded (body and headers) for assertions.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TestContext } from 'node:test';
import { hashEmbedding, HASH_EMBEDDING_DIMENSIONS } from './hash-embedding.ts';
import { startServer, type TestServer } from './route-server.ts';

export interface ScriptedReply {
  status?: number;
  headers?: Record<string, string>;
  /** A raw body (sent as is: malformed or truncated JSON too). */
  body?: string;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Change the correct answer before it is sent (wrong count, wrong dimension). */
  mutate?(answer: Record<string, unknown>): void;
}

export interface EmbeddingServer extends TestServer {
  /** Replies for the next requests, in order; once used up, requests are answered correctly. */
  script: ScriptedReply[];
  /** JSON bodies of the embedding requests, in order. */
  bodies: Array<Record<string, unknown>>;
  /** How many texts were embedded (correct answers only). */
  embeddedTexts: number;
  dimensions: number;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let data = '';
  for await (const chunk of req) data += chunk;
  return data;
}

async function answer(server: EmbeddingServer, res: ServerResponse, make: () => Record<string, unknown>): Promise<void> {
  const scripted = server.script.shift();
  if (scripted?.delayMs) await new Promise((r) => setTimeout(r, scripted.delayMs));
  if (scripted?.body !== undefined || scripted?.status) {
    res.writeHead(scripted.status ?? 200, { 'content-type': 'application/json', ...scripted.headers });
    res.end(scripted.body ?? '{}');
    return;
  }
  const body = make();
  scripted?.mutate?.(body);
  res.writeHead(200, { 'content-type': 'application/json', ...scripted?.headers });
  res.end(JSON.stringify(body));
}

function base64Of(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
}

/** An OpenAI-compatible embeddings server at `<base>/v1`. */
export async function startOpenAiEmbeddings(t?: TestContext, opts: { dimensions?: number; key?: string } = {}): Promise<EmbeddingServer> {
  const dimensions = opts.dimensions ?? HASH_EMBEDDING_DIMENSIONS;
  const state = { script: [] as ScriptedReply[], bodies: [] as Array<Record<string, unknown>>, embeddedTexts: 0, dimensions };
  const server = (await startServer(async (req, res, url) => {
    if (req.method !== 'POST' || url.pathname !== '/v1/embeddings') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Invalid URL (${req.method} ${url.pathname})`, type: 'invalid_request_error', param: null, code: null } }));
      return;
    }
    const body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    state.bodies.push(body);
    if (opts.key !== undefined && req.headers.authorization !== `Bearer ${opts.key}`) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'Incorrect API key provided: sk-****. You can find your API key at https://platform.openai.com/account/api-keys.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }));
      return;
    }
    const input = typeof body.input === 'string' ? [body.input] : (body.input as string[]);
    await answer(full, res, () => {
      state.embeddedTexts += input.length;
      full.embeddedTexts = state.embeddedTexts;
      return {
        object: 'list',
        data: input.map((text, index) => {
          const v = hashEmbedding(text, dimensions);
          return { object: 'embedding', index, embedding: body.encoding_format === 'base64' ? base64Of(v) : Array.from(v) };
        }),
        model: body.model,
        usage: { prompt_tokens: input.length, total_tokens: input.length },
      };
    });
  }, t)) as TestServer;
  const full = Object.assign(server, state) as EmbeddingServer;
  return full;
}

/** A Gemini API server at `<base>/v1beta`. */
export async function startGeminiEmbeddings(t?: TestContext, opts: { dimensions?: number; key?: string } = {}): Promise<EmbeddingServer> {
  const dimensions = opts.dimensions ?? HASH_EMBEDDING_DIMENSIONS;
  const state = { script: [] as ScriptedReply[], bodies: [] as Array<Record<string, unknown>>, embeddedTexts: 0, dimensions };
  const server = (await startServer(async (req, res, url) => {
    const m = /^\/v1beta\/models\/([^/:]+):batchEmbedContents$/.exec(url.pathname);
    if (req.method !== 'POST' || !m) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 404, message: `Method not found: ${url.pathname}`, status: 'NOT_FOUND' } }));
      return;
    }
    const body = JSON.parse(await readBody(req)) as { requests: Array<{ content: { parts: Array<{ text: string }> } }> };
    state.bodies.push(body as unknown as Record<string, unknown>);
    if (opts.key !== undefined && req.headers['x-goog-api-key'] !== opts.key) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT' } }));
      return;
    }
    await answer(full, res, () => {
      state.embeddedTexts += body.requests.length;
      full.embeddedTexts = state.embeddedTexts;
      return { embeddings: body.requests.map((r) => ({ values: Array.from(hashEmbedding(r.content.parts.map((p) => p.text).join(''), dimensions)) })) };
    });
  }, t)) as TestServer;
  const full = Object.assign(server, state) as EmbeddingServer;
  return full;
}
