/**
 * POST /api/settings/test: one tiny, vendor-shaped request to each configured endpoint, and per
 * provider either ok or why not (never the key).
 *
 * - OpenAI-compatible LLM (`openai`, `custom`): `GET {baseUrl}/models` with `Authorization: Bearer`
 *   (free; a model the list does not name is a warning).
 * - Anthropic: `POST {baseUrl}/v1/messages` with `x-api-key` and `anthropic-version`, 1 token.
 * - Gemini: `POST {baseUrl}/models/{model}:generateContent` with `x-goog-api-key`, 1 token.
 * - Embeddings: `POST {baseUrl}/embeddings` (OpenAI-compatible) or
 *   `POST {baseUrl}/models/{model}:embedContent` (Gemini) with one short input.
 *
 * These endpoints were configured by an admin, so they are called with the plain fetch, not the
 * guarded one that keeps sources away from private addresses (a local model server is normal).
 * Redirects are not followed: a key goes only to the host it was given for.
 */
import { createRedactor, excerpt, type Redactor } from '../core/redact.ts';
import type { ProviderEndpoint, ResolvedProviders } from '../core/provider-settings.ts';

export const ANTHROPIC_VERSION = '2023-06-01';

export interface ProviderCheck {
  /** False when the settings configure nothing for this role. */
  configured: boolean;
  ok: boolean;
  provider?: string;
  baseUrl?: string;
  model?: string;
  /** HTTP status of the endpoint's answer, when there was one. */
  status?: number;
  /** Why it failed: what the endpoint said (redacted, short) and what to check. */
  error?: string;
  /** Worked, with a caveat (e.g. the model is not in the endpoint's list). */
  warning?: string;
  /** Embeddings: the vector length the endpoint answered with. */
  dimensions?: number;
  /** How long the check took. */
  ms?: number;
  /** For a role that is not configured: why (e.g. Anthropic has no embeddings API). */
  message?: string;
}

export interface ProviderCheckResult {
  ok: boolean;
  llm: ProviderCheck;
  embedding: ProviderCheck;
}

export interface CheckOptions {
  /** Time limit of each request (default 10 s). */
  timeoutMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

interface Call {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: unknown;
}

const MAX_BODY = 256 * 1024;

function join(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

function authHeaders(e: ProviderEndpoint): Record<string, string> {
  if (!e.apiKey) return {};
  if (e.api === 'anthropic') return { 'x-api-key': e.apiKey, 'anthropic-version': ANTHROPIC_VERSION };
  if (e.api === 'gemini') return { 'x-goog-api-key': e.apiKey };
  return { authorization: `Bearer ${e.apiKey}` };
}

function llmCall(e: ProviderEndpoint): Call {
  const headers = { accept: 'application/json', ...authHeaders(e) };
  if (e.api === 'anthropic') {
    return {
      method: 'POST',
      url: join(e.baseUrl, '/v1/messages'),
      headers: { ...headers, 'anthropic-version': ANTHROPIC_VERSION },
      body: { model: e.model, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] },
    };
  }
  if (e.api === 'gemini') {
    return {
      method: 'POST',
      url: join(e.baseUrl, `/models/${encodeURIComponent(e.model)}:generateContent`),
      headers,
      body: { contents: [{ role: 'user', parts: [{ text: 'ping' }] }], generationConfig: { maxOutputTokens: 1 } },
    };
  }
  return { method: 'GET', url: join(e.baseUrl, '/models'), headers };
}

function embeddingCall(e: ProviderEndpoint): Call {
  const headers = { accept: 'application/json', ...authHeaders(e) };
  if (e.api === 'gemini') {
    return { method: 'POST', url: join(e.baseUrl, `/models/${encodeURIComponent(e.model)}:embedContent`), headers, body: { content: { parts: [{ text: 'ping' }] } } };
  }
  return { method: 'POST', url: join(e.baseUrl, '/embeddings'), headers, body: { model: e.model, input: 'ping' } };
}

/** The vendor's own error message from an error body (OpenAI, Anthropic and Gemini shapes). */
function vendorMessage(json: unknown): string | undefined {
  if (!json || typeof json !== 'object') return undefined;
  const err = (json as { error?: unknown }).error;
  if (typeof err === 'string') return err;
  if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') return (err as { message: string }).message;
  const msg = (json as { message?: unknown }).message;
  return typeof msg === 'string' ? msg : undefined;
}

function hint(status: number, e: ProviderEndpoint): string {
  if (status === 401 || status === 403) return e.apiKey ? 'the endpoint refused the key: check the API key' : 'the endpoint needs an API key: set one';
  if (status === 404) return 'not found: check the base URL and the model name';
  if (status === 429) return 'rate limited or out of quota at the provider';
  if (status >= 500) return 'the provider failed; try again later';
  if (status >= 300 && status < 400) return 'the endpoint redirects; set the base URL to the final address (keys are not sent on)';
  return 'the endpoint refused the request';
}

async function readBody(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
    if (size > MAX_BODY) {
      await reader.cancel().catch(() => {});
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

function networkError(e: unknown, timeoutMs: number, url: string): string {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return `no answer within ${timeoutMs} ms from ${new URL(url).host}`;
  const code = err.cause?.code;
  if (code === 'ECONNREFUSED') return `could not connect to ${new URL(url).host} (connection refused): check the base URL and that the server runs`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the host ${new URL(url).hostname} is not known (DNS): check the base URL`;
  return `the request failed: ${code ?? err.cause?.message ?? err.message}`;
}

async function run(
  role: 'llm' | 'embedding',
  e: ProviderEndpoint,
  opts: Required<CheckOptions>,
  redact: Redactor,
  judge: (json: unknown) => Pick<ProviderCheck, 'ok' | 'warning' | 'dimensions' | 'error'>,
): Promise<ProviderCheck> {
  const call = role === 'llm' ? llmCall(e) : embeddingCall(e);
  const base: ProviderCheck = { configured: true, ok: false, provider: e.provider, baseUrl: e.baseUrl, model: e.model };
  const started = Date.now();
  try {
    const res = await opts.fetch(call.url, {
      method: call.method,
      headers: call.body === undefined ? call.headers : { ...call.headers, 'content-type': 'application/json' },
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      redirect: 'manual',
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
    const text = await readBody(res);
    const ms = Date.now() - started;
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const said = vendorMessage(json) ?? (json === undefined ? excerpt(text, redact, 120) : '');
      return { ...base, status: res.status, ms, error: `HTTP ${res.status}: ${hint(res.status, e)}${said ? ` (the endpoint said: ${excerpt(said, redact, 200)})` : ''}` };
    }
    const verdict = judge(json);
    return { ...base, status: res.status, ms, ...verdict, ...(verdict.error ? { error: redact(verdict.error) } : {}) };
  } catch (err) {
    return { ...base, ms: Date.now() - started, error: redact(networkError(err, opts.timeoutMs, call.url)) };
  }
}

function judgeLlm(e: ProviderEndpoint) {
  return (json: unknown): Pick<ProviderCheck, 'ok' | 'warning' | 'error'> => {
    if (e.api !== 'openai') return json && typeof json === 'object' ? { ok: true } : { ok: false, error: 'the endpoint answered 200 but not with JSON: check the base URL' };
    const data = (json as { data?: unknown } | undefined)?.data;
    if (!Array.isArray(data)) return { ok: false, error: 'the endpoint answered 200 but not with an OpenAI-style model list ({"data": [...]}): check the base URL (it usually ends in /v1)' };
    const ids = data.map((m) => (m && typeof m === 'object' ? (m as { id?: unknown }).id : undefined)).filter((x): x is string => typeof x === 'string');
    if (ids.length > 0 && !ids.includes(e.model)) return { ok: true, warning: `the endpoint does not list model "${e.model}" (it lists ${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', ...' : ''})` };
    return { ok: true };
  };
}

function judgeEmbedding(e: ProviderEndpoint) {
  return (json: unknown): Pick<ProviderCheck, 'ok' | 'dimensions' | 'error'> => {
    const vector = e.api === 'gemini'
      ? (json as { embedding?: { values?: unknown } } | undefined)?.embedding?.values
      : (json as { data?: Array<{ embedding?: unknown }> } | undefined)?.data?.[0]?.embedding;
    if (!Array.isArray(vector) || vector.length === 0 || !vector.every((x) => typeof x === 'number')) {
      return { ok: false, error: `the endpoint answered 200 without an embedding vector (${e.api === 'gemini' ? 'embedding.values' : 'data[0].embedding'}): check the base URL and the model` };
    }
    return { ok: true, dimensions: vector.length };
  };
}

/** Tries the resolved LLM and embedding endpoints (both at once) and reports each. */
export async function checkProviders(resolved: ResolvedProviders, options: CheckOptions = {}): Promise<ProviderCheckResult> {
  const opts: Required<CheckOptions> = { timeoutMs: options.timeoutMs ?? 10_000, fetch: options.fetch ?? fetch };
  const keys = [resolved.llm?.apiKey, resolved.embedding?.apiKey].filter((k): k is string => typeof k === 'string');
  const redact = createRedactor(keys);
  const [llm, embedding] = await Promise.all([
    resolved.llm
      ? run('llm', resolved.llm, opts, redact, judgeLlm(resolved.llm))
      : Promise.resolve<ProviderCheck>({ configured: false, ok: false, message: 'no LLM provider is set (llm.provider)' }),
    resolved.embedding
      ? run('embedding', resolved.embedding, opts, redact, judgeEmbedding(resolved.embedding))
      : Promise.resolve<ProviderCheck>({ configured: false, ok: false, message: resolved.embeddingNote }),
  ]);
  const tried = [llm, embedding].filter((c) => c.configured);
  return { ok: tried.length > 0 && tried.every((c) => c.ok), llm, embedding };
}
