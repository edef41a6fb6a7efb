/**
 * Loopback HTTP servers shaped like the LLM vendors' APIs, for the provider plugins' tests: the
 * real paths (OpenAI `POST /v1/chat/completions`, Anthropic `POST /v1/messages`, Gemini
 * `POST /v1beta/models/<model>:generateContent`), their success and error JSON, status codes and
 * headers. The test scripts each reply; every call is recorded with its headers and parsed body.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { TestContext } from 'node:test';
import { listenOnLoopback } from './listen.ts';

export type Vendor = 'openai' | 'anthropic' | 'gemini';

export interface LlmCall {
  method: string;
  /** Path and query. */
  path: string;
  headers: IncomingMessage['headers'];
  /** The request body parsed as JSON (null when it was not JSON). */
  body: any;
}

export interface ScriptedReply {
  status?: number;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is with content-type application/json (malformed or truncated bodies). */
  raw?: string;
  /** Wait this long before answering (slow replies). */
  delayMs?: number;
  /** Send the headers and part of `raw`, then cut the connection. */
  cutAfterBytes?: number;
}

export interface VendorServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** The base URL an operator would enter in Settings for this vendor. */
  baseUrl: string;
  calls: LlmCall[];
  close(): Promise<void>;
}

/** The base URL path each vendor's settings take (core/provider-settings.ts VENDOR_DEFAULTS). */
const BASE_PATH: Record<Vendor, string> = { openai: '/v1', anthropic: '', gemini: '/v1beta' };

/** Closed when the test ends (or by close() when `t` is null). */
export async function startVendorServer(t: TestContext | null, vendor: Vendor, script: (call: LlmCall, n: number) => ScriptedReply): Promise<VendorServer> {
  const calls: LlmCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
      const call: LlmCall = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body };
      calls.push(call);
      const reply = script(call, calls.length);
      const answer = () => {
        if (res.destroyed) return;
        const payload = reply.raw ?? JSON.stringify(reply.json ?? {});
        const headers = { 'content-type': 'application/json; charset=utf-8', ...reply.headers };
        if (reply.cutAfterBytes !== undefined) {
          res.writeHead(reply.status ?? 200, { ...headers, 'content-length': String(Buffer.byteLength(payload)) });
          res.write(payload.slice(0, reply.cutAfterBytes), () => res.destroy());
          return;
        }
        res.writeHead(reply.status ?? 200, { ...headers, 'content-length': String(Buffer.byteLength(payload)) });
        res.end(payload);
      };
      if (reply.delayMs) setTimeout(answer, reply.delayMs).unref();
      else answer();
    });
  });
  const origin = await listenOnLoopback(server);
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  t?.after(close);
  return { origin, baseUrl: origin + BASE_PATH[vendor], calls, close };
}

/** The path a vendor's completion request goes to. */
export function completionPath(vendor: Vendor, model: string): string {
  if (vendor === 'openai') return '/v1/chat/completions';
  if (vendor === 'anthropic') return '/v1/messages';
  return `/v1beta/models/${model}:generateContent`;
}

/** A vendor's successful answer with `text`, as its API sends it. */
export function vendorAnswer(vendor: Vendor, text: string, model: string): unknown {
  if (vendor === 'openai') {
    return {
      id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
      object: 'chat.completion',
      created: 1741569952,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 19, completion_tokens: 10, total_tokens: 29, prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 } },
      service_tier: 'default',
      system_fingerprint: 'fp_fc9f1d7035',
    };
  }
  if (vendor === 'anthropic') {
    return {
      id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 19, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    };
  }
  return {
    candidates: [{ content: { parts: [{ text }], role: 'model' }, finishReason: 'STOP', avgLogprobs: -0.12 }],
    usageMetadata: { promptTokenCount: 19, candidatesTokenCount: 10, totalTokenCount: 29, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 19 }] },
    modelVersion: model,
    responseId: 'Hh3aZ9yTNrSZ1MkPyPS_wQQ',
  };
}

/** A vendor's error body for `status` (as its API shapes it), with `message` in it. */
export function vendorError(vendor: Vendor, status: number, message: string): unknown {
  if (vendor === 'openai') {
    const type = status === 401 ? 'invalid_request_error' : status === 429 ? 'requests' : status >= 500 ? 'server_error' : 'invalid_request_error';
    return { error: { message, type, param: null, code: status === 401 ? 'invalid_api_key' : status === 429 ? 'rate_limit_exceeded' : null } };
  }
  if (vendor === 'anthropic') {
    const type = status === 401 ? 'authentication_error' : status === 403 ? 'permission_error' : status === 429 ? 'rate_limit_error' : status === 529 ? 'overloaded_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
    return { type: 'error', error: { type, message } };
  }
  const statusName = status === 401 ? 'UNAUTHENTICATED' : status === 403 ? 'PERMISSION_DENIED' : status === 429 ? 'RESOURCE_EXHAUSTED' : status >= 500 ? 'UNAVAILABLE' : 'INVALID_ARGUMENT';
  return { error: { code: status, message, status: statusName } };
}

/** Gemini's real answer to a key it does not know: 400 INVALID_ARGUMENT with reason API_KEY_INVALID. */
export function geminiInvalidKey(): unknown {
  return {
    error: {
      code: 400,
      message: 'API key not valid. Please pass a valid API key.',
      status: 'INVALID_ARGUMENT',
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } }],
    },
  };
}
