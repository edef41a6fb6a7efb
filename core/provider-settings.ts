/**
 * The operator's settings for model providers (LLM, embeddings) and git hosts: their stored
 * shape (secrets sealed), the JSON schema of a change (PATCH /api/settings), how a change is
 * merged (a key is never kept for a host it was not given for), the write-only view an admin
 * sees, and the resolver that gives the effective LLM and embedding endpoints.
 *
 * Pure functions over plain values and a SecretBox; core/settings.ts reads and writes them in the
 * Store.
 */
import type { JsonSchema } from './define.ts';
import { RefdeskError } from './errors.ts';
import type { SecretBox } from './secrets.ts';
import { validate } from './validate.ts';

export const LLM_PROVIDERS = ['custom', 'openai', 'anthropic', 'gemini'] as const;
export const EMBEDDING_PROVIDERS = ['openai', 'gemini'] as const;
export const GIT_HOST_PROVIDERS = ['github', 'gitlab'] as const;
export type LlmProvider = (typeof LLM_PROVIDERS)[number];
export type EmbeddingProvider = (typeof EMBEDDING_PROVIDERS)[number];
export type GitHostProvider = (typeof GIT_HOST_PROVIDERS)[number];

/** Vendors' default endpoints and models (used when the settings leave them out). */
export const VENDOR_DEFAULTS = {
  openai: { baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini', embeddingModel: 'text-embedding-3-small' },
  anthropic: { baseUrl: 'https://api.anthropic.com', model: 'claude-3-5-haiku-latest' },
  gemini: { baseUrl: 'https://generativelanguage.googleapis.com/v1beta', model: 'gemini-2.0-flash', embeddingModel: 'text-embedding-004' },
} as const;

// ---------------------------------------------------------------------------------------------
// Shapes
// ---------------------------------------------------------------------------------------------

/** A model provider section as stored (setting `llm` or `embedding`); `apiKey` is sealed. */
export interface StoredProvider<P extends string> {
  provider?: P;
  apiKey?: string;
  model?: string;
  baseUrl?: string;
}

/** A self-managed GitHub or GitLab host and its token (sealed). `host` is a name, optionally with `:port`. */
export interface StoredGitHost {
  host: string;
  provider: GitHostProvider;
  token?: string;
}

/** Setting `git`: tokens (sealed) for github.com, gitlab.com and self-managed hosts. */
export interface StoredGit {
  githubToken?: string;
  gitlabToken?: string;
  hosts?: StoredGitHost[];
}

/** The settings sections this module merges (as stored). */
export interface StoredProviderSettings {
  llm: StoredProvider<LlmProvider>;
  embedding: StoredProvider<EmbeddingProvider>;
  git: StoredGit;
}

/** A secret as an admin sees it: whether it is set and, for keys of 12 characters or more, its last four. */
export interface SecretView {
  set: boolean;
  last4?: string;
  /** The stored value cannot be opened with this server's sealing key (ENCRYPTION_KEY changed): enter it again. */
  unreadable?: true;
}

// ---------------------------------------------------------------------------------------------
// The change's schema
// ---------------------------------------------------------------------------------------------

/** The largest upload limits the settings take (10 GiB, 100,000 files). */
export const UPLOAD_MAX_BYTES_CAP = 10 * 1024 ** 3;
export const UPLOAD_MAX_FILES_CAP = 100_000;

const secret = { type: ['string', 'null'], minLength: 1, maxLength: 4000, writeOnly: true };
const text = (max: number) => ({ type: ['string', 'null'], minLength: 1, maxLength: max });

function providerSchema(providers: readonly string[]): JsonSchema {
  return {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: {
      provider: { enum: [...providers, null] },
      apiKey: secret,
      model: text(200),
      baseUrl: text(2000),
    },
  };
}

/** PATCH /api/settings: every section and field optional; null clears; unknown fields refused. */
export const settingsPatchSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    llm: providerSchema(LLM_PROVIDERS),
    embedding: providerSchema(EMBEDDING_PROVIDERS),
    git: {
      type: ['object', 'null'],
      additionalProperties: false,
      properties: {
        githubToken: secret,
        gitlabToken: secret,
        hosts: {
          type: 'array',
          maxItems: 50,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['host', 'provider'],
            properties: {
              host: { type: 'string', minLength: 1, maxLength: 260 },
              provider: { enum: [...GIT_HOST_PROVIDERS] },
              token: secret,
            },
          },
        },
      },
    },
    anonymous: {
      type: 'object',
      additionalProperties: false,
      properties: { parse: { type: 'boolean' }, refresh: { type: 'boolean' }, delete: { type: 'boolean' }, supportBundle: { type: 'boolean' } },
    },
    mcp: { type: 'object', additionalProperties: false, properties: { requireKey: { type: 'boolean' } } },
    // Limits of POST /api/libraries/upload; null (or the section null) falls back to the config's uploads.*.
    uploads: {
      type: ['object', 'null'],
      additionalProperties: false,
      properties: {
        maxBytes: { type: ['integer', 'null'], minimum: 1, maximum: UPLOAD_MAX_BYTES_CAP },
        maxFiles: { type: ['integer', 'null'], minimum: 1, maximum: UPLOAD_MAX_FILES_CAP },
      },
    },
  },
};

export type ProviderPatch = { provider?: string | null; apiKey?: string | null; model?: string | null; baseUrl?: string | null } | null;
export interface GitPatch {
  githubToken?: string | null;
  gitlabToken?: string | null;
  hosts?: Array<{ host: string; provider: GitHostProvider; token?: string | null }>;
}
export interface SettingsPatch {
  llm?: ProviderPatch;
  embedding?: ProviderPatch;
  git?: GitPatch | null;
  anonymous?: Partial<Record<'parse' | 'refresh' | 'delete' | 'supportBundle', boolean>>;
  mcp?: { requireKey?: boolean };
  uploads?: { maxBytes?: number | null; maxFiles?: number | null } | null;
}

/** At most this many problems are listed, each cut to PROBLEM_CHARS (a body may name 50,000 unknown fields). */
const MAX_PROBLEMS = 8;
const PROBLEM_CHARS = 200;

function invalid(problems: string[]): never {
  const shown = problems.slice(0, MAX_PROBLEMS).map((p) => (p.length > PROBLEM_CHARS ? `${p.slice(0, PROBLEM_CHARS)}...` : p));
  const more = problems.length > MAX_PROBLEMS ? `; and ${problems.length - MAX_PROBLEMS} more` : '';
  throw new RefdeskError('invalid_request', `Invalid settings: ${shown.join('; ')}${more}.`);
}

/** A host name (or IPv4 address), optionally `:port`, lower-cased. */
const HOST_RE = /^(?=.{1,253}(:|$))[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:[0-9]{1,5})?$/;

/** Checks a change against the schema (400 naming every bad field; values are never echoed). */
export function validateSettingsPatch(body: unknown): SettingsPatch {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) invalid(['the body must be a JSON object of settings sections (llm, embedding, git, anonymous, mcp, uploads)']);
  const problems = validate(settingsPatchSchema, body, '');
  if (problems.length) invalid(problems.map((p) => p.replace(/^\./, '')));
  const patch = body as SettingsPatch;
  for (const section of ['llm', 'embedding'] as const) {
    const url = patch[section]?.baseUrl;
    if (typeof url === 'string') {
      const problem = baseUrlProblem(url);
      if (problem) invalid([`${section}.baseUrl: ${problem}`]);
    }
  }
  const hosts = patch.git?.hosts ?? [];
  const seen = new Set<string>();
  for (const [i, h] of hosts.entries()) {
    const host = h.host.trim().toLowerCase();
    if (!HOST_RE.test(host)) invalid([`git.hosts[${i}].host: must be a host name or address, optionally with :port (no scheme, no path)`]);
    if (host === 'github.com' || host === 'gitlab.com') invalid([`git.hosts[${i}].host: ${host} uses git.${host === 'github.com' ? 'githubToken' : 'gitlabToken'}; name self-managed hosts here`]);
    if (seen.has(host)) invalid([`git.hosts[${i}].host: ${host} is named twice`]);
    seen.add(host);
  }
  return patch;
}

/** Why a base URL cannot be used ('' when it can). Credentials in the URL are refused: keys go in apiKey. */
export function baseUrlProblem(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http(s) URL such as https://api.example.com/v1';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not carry a user name or password: send the key as apiKey';
  if (url.search || url.hash) return 'must not have a query or fragment';
  return '';
}

// ---------------------------------------------------------------------------------------------
// Merging a change
// ---------------------------------------------------------------------------------------------

export interface MergeResult {
  stored: StoredProviderSettings;
  /** The fields the change set or cleared (names only, e.g. "llm.apiKey"), for the audit log. */
  changed: string[];
  /** Keys removed because their provider or base URL changed without the key being sent again. */
  cleared: string[];
}

const norm = (v: unknown): unknown => (v === null ? undefined : v);
const trimUrl = (u: string): string => u.trim().replace(/\/+$/, '');

function mergeProvider<P extends string>(section: string, stored: StoredProvider<P>, patch: ProviderPatch | undefined, box: SecretBox, out: MergeResult): StoredProvider<P> {
  if (patch === undefined) return stored;
  if (patch === null) {
    if (Object.keys(stored).length) out.changed.push(section);
    return {};
  }
  const providerChanged = 'provider' in patch && norm(patch.provider) !== stored.provider;
  // A new provider starts the section afresh: what is not sent with it is not carried over.
  const next: StoredProvider<P> = providerChanged ? {} : { ...stored };
  for (const field of ['provider', 'model', 'baseUrl'] as const) {
    if (!(field in patch)) continue;
    const v = norm(patch[field]) as string | undefined;
    const value = v === undefined ? undefined : field === 'baseUrl' ? trimUrl(v) : v.trim();
    if (value === undefined) delete next[field];
    else (next as Record<string, string>)[field] = value;
  }
  for (const field of ['provider', 'model', 'baseUrl'] as const) if (next[field] !== stored[field]) out.changed.push(`${section}.${field}`);
  const baseUrlChanged = next.baseUrl !== stored.baseUrl;
  if ('apiKey' in patch) {
    if (patch.apiKey === null || patch.apiKey === undefined) delete next.apiKey;
    else next.apiKey = box.seal(patch.apiKey);
    out.changed.push(`${section}.apiKey`);
  } else if ((providerChanged || baseUrlChanged) && stored.apiKey) {
    // Never send a key to a host it was not given for.
    delete next.apiKey;
    out.cleared.push(`${section}.apiKey`);
  }
  return next;
}

function mergeGit(stored: StoredGit, patch: GitPatch | null | undefined, box: SecretBox, out: MergeResult): StoredGit {
  if (patch === undefined) return stored;
  if (patch === null) {
    if (Object.keys(stored).length) out.changed.push('git');
    return {};
  }
  const next: StoredGit = { ...stored };
  for (const field of ['githubToken', 'gitlabToken'] as const) {
    if (!(field in patch)) continue;
    const v = patch[field];
    if (v === null || v === undefined) delete next[field];
    else next[field] = box.seal(v);
    out.changed.push(`git.${field}`);
  }
  if (patch.hosts) {
    const before = new Map((stored.hosts ?? []).map((h) => [h.host, h]));
    next.hosts = patch.hosts.map((h, i) => {
      const host = h.host.trim().toLowerCase();
      const entry: StoredGitHost = { host, provider: h.provider };
      const old = before.get(host);
      if (typeof h.token === 'string') {
        entry.token = box.seal(h.token);
        out.changed.push(`git.hosts[${i}].token`);
      } else if (h.token === undefined && old?.token && old.provider === h.provider) {
        entry.token = old.token; // same host, same kind: its own token stays
      } else if (old?.token) {
        out.cleared.push(`git.hosts[${i}].token`);
      }
      return entry;
    });
    out.changed.push('git.hosts');
  }
  return next;
}

/** The settings after a validated change; checks that the result is usable (e.g. custom has a base URL). */
export function mergeSettings(stored: StoredProviderSettings, patch: SettingsPatch, box: SecretBox): MergeResult {
  const out: MergeResult = { stored, changed: [], cleared: [] };
  const llm = mergeProvider('llm', stored.llm, patch.llm, box, out);
  const embedding = mergeProvider('embedding', stored.embedding, patch.embedding, box, out);
  const git = mergeGit(stored.git, patch.git, box, out);
  const problems: string[] = [];
  if (llm.provider === 'custom' && !llm.baseUrl) problems.push('llm.baseUrl: the custom provider needs the base URL of its OpenAI-compatible API (e.g. http://127.0.0.1:11434/v1)');
  if (llm.provider === 'custom' && !llm.model) problems.push('llm.model: the custom provider needs the model name its endpoint serves');
  if (!llm.provider && (llm.apiKey || llm.baseUrl)) problems.push('llm.provider: set the provider (custom, openai, anthropic or gemini) together with its key or base URL');
  if (!embedding.provider && (embedding.apiKey || embedding.baseUrl)) problems.push('embedding.provider: set the provider (openai or gemini) together with its key or base URL');
  if (problems.length) invalid(problems);
  out.stored = { llm, embedding, git };
  return out;
}

// ---------------------------------------------------------------------------------------------
// What an admin sees
// ---------------------------------------------------------------------------------------------

/** Whether a sealed secret is set and its last four characters (keys of 12 characters or more); never the value. */
export function secretView(sealed: string | undefined, box: SecretBox): SecretView {
  if (!sealed) return { set: false };
  try {
    const plain = box.open(sealed);
    return plain.length >= 12 ? { set: true, last4: plain.slice(-4) } : { set: true };
  } catch {
    return { set: true, unreadable: true };
  }
}

export function providerView(p: StoredProvider<string>, box: SecretBox): Record<string, unknown> {
  return { provider: p.provider ?? null, model: p.model ?? null, baseUrl: p.baseUrl ?? null, apiKey: secretView(p.apiKey, box) };
}

export function gitView(g: StoredGit, box: SecretBox): Record<string, unknown> {
  return {
    githubToken: secretView(g.githubToken, box),
    gitlabToken: secretView(g.gitlabToken, box),
    hosts: (g.hosts ?? []).map((h) => ({ host: h.host, provider: h.provider, token: secretView(h.token, box) })),
  };
}

// ---------------------------------------------------------------------------------------------
// The resolver
// ---------------------------------------------------------------------------------------------

/** A provider section with its key opened (in memory only). */
export interface ProviderConfig<P extends string> {
  provider?: P;
  apiKey?: string;
  model?: string;
  baseUrl?: string;
}

export interface ProviderSettings {
  llm: ProviderConfig<LlmProvider>;
  embedding: ProviderConfig<EmbeddingProvider>;
}

/** Which wire protocol an endpoint speaks. */
export type ProviderApi = 'openai' | 'anthropic' | 'gemini';

/** An effective endpoint for a model-provider plugin. */
export interface ProviderEndpoint {
  /** The vendor as configured (`custom` speaks the OpenAI-compatible API). */
  provider: LlmProvider | EmbeddingProvider;
  api: ProviderApi;
  /** Without a trailing slash. */
  baseUrl: string;
  model: string;
  /** null: none configured (a local OpenAI-compatible server may need none). */
  apiKey: string | null;
  /** Where the key came from: this section, the LLM's (fallback), or none. */
  keyFrom: 'llm' | 'embedding' | null;
}

export interface ResolvedProviders {
  llm: ProviderEndpoint | null;
  embedding: ProviderEndpoint | null;
  /** Why there is no embedding endpoint (search stays lexical), or how it was derived. */
  embeddingNote: string;
}

/** Opens the keys of the stored provider sections (in memory, for the resolver and the checks). */
export function openProviderSettings(stored: Pick<StoredProviderSettings, 'llm' | 'embedding'>, box: SecretBox): ProviderSettings {
  const open = <P extends string>(p: StoredProvider<P>): ProviderConfig<P> => ({ ...p, ...(p.apiKey ? { apiKey: box.open(p.apiKey) } : {}) });
  return { llm: open(stored.llm), embedding: open(stored.embedding) };
}

/** `scheme://host:port` of a URL, for "the same host" decisions. */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

function llmEndpoint(llm: ProviderConfig<LlmProvider>): ProviderEndpoint | null {
  const p = llm.provider;
  if (!p) return null;
  if (p === 'custom') {
    if (!llm.baseUrl || !llm.model) return null;
    return { provider: p, api: 'openai', baseUrl: trimUrl(llm.baseUrl), model: llm.model, apiKey: llm.apiKey ?? null, keyFrom: llm.apiKey ? 'llm' : null };
  }
  const d = VENDOR_DEFAULTS[p];
  return { provider: p, api: p, baseUrl: trimUrl(llm.baseUrl ?? d.baseUrl), model: llm.model ?? d.model, apiKey: llm.apiKey ?? null, keyFrom: llm.apiKey ? 'llm' : null };
}

/**
 * The effective LLM and embedding endpoints, key and model of each:
 *
 * - LLM: the configured provider; vendors' default base URL and model when left out; `custom`
 *   needs both a base URL (OpenAI-compatible API) and a model.
 * - Embedding with a provider set: that vendor's endpoint (or its base URL); without its own key
 *   it uses the LLM's key, only when the LLM's effective endpoint is on the same origin (scheme,
 *   host and port): a key never goes to a host it was not given for.
 * - Embedding with no provider set: LLM `custom` and `openai` embed through the OpenAI-compatible
 *   embeddings API of the same endpoint with the same key (`custom` needs `embedding.model`),
 *   `gemini` through Gemini's, `anthropic` (no embeddings API) and no LLM leave search lexical.
 */
export function resolveProviders(settings: ProviderSettings): ResolvedProviders {
  const llm = llmEndpoint(settings.llm);
  const e = settings.embedding;
  if (e.provider) {
    const d = VENDOR_DEFAULTS[e.provider];
    const baseUrl = trimUrl(e.baseUrl ?? d.baseUrl);
    const model = e.model ?? d.embeddingModel;
    if (e.apiKey) return { llm, embedding: { provider: e.provider, api: e.provider, baseUrl, model, apiKey: e.apiKey, keyFrom: 'embedding' }, embeddingNote: `embedding provider ${e.provider}` };
    const shared = llm?.apiKey && origin(llm.baseUrl) === origin(baseUrl) ? llm.apiKey : null;
    return {
      llm,
      embedding: { provider: e.provider, api: e.provider, baseUrl, model, apiKey: shared, keyFrom: shared ? 'llm' : null },
      embeddingNote: shared ? `embedding provider ${e.provider} with the LLM's key (same host)` : `embedding provider ${e.provider} without a key (the LLM's key is used only for the same host)`,
    };
  }
  if (!llm) return { llm, embedding: null, embeddingNote: 'no embedding provider and no LLM provider: search is lexical' };
  if (llm.provider === 'anthropic') return { llm, embedding: null, embeddingNote: 'Anthropic has no embeddings API: search stays lexical until an embedding provider is set' };
  const api = llm.api === 'gemini' ? 'gemini' : 'openai';
  const model = e.model ?? (llm.provider === 'openai' ? VENDOR_DEFAULTS.openai.embeddingModel : llm.provider === 'gemini' ? VENDOR_DEFAULTS.gemini.embeddingModel : undefined);
  if (!model) return { llm, embedding: null, embeddingNote: 'the custom endpoint embeds only once embedding.model names its embedding model: search is lexical until then' };
  return {
    llm,
    embedding: { provider: api === 'gemini' ? 'gemini' : 'openai', api, baseUrl: llm.baseUrl, model, apiKey: llm.apiKey, keyFrom: llm.apiKey ? 'llm' : null },
    embeddingNote: `embeddings through the LLM's endpoint (${api === 'gemini' ? "Gemini's" : 'OpenAI-compatible'} embeddings API)`,
  };
}

/** The resolved endpoints without their keys (for GET /api/settings). */
export function resolvedView(r: ResolvedProviders): Record<string, unknown> {
  const strip = (e: ProviderEndpoint | null) => (e ? { provider: e.provider, api: e.api, baseUrl: e.baseUrl, model: e.model, keyFrom: e.keyFrom } : null);
  return { llm: strip(r.llm), embedding: strip(r.embedding), embeddingNote: r.embeddingNote };
}

// ---------------------------------------------------------------------------------------------
// Git tokens
// ---------------------------------------------------------------------------------------------

/** The token the settings give for a repository's host (https/http only), with the kind of host. */
export interface GitHostToken {
  token: string;
  provider: GitHostProvider;
}

/**
 * The settings token for a host: github.com's and gitlab.com's over https, a self-managed host's
 * own token when the host is named in `git.hosts` (by name, or name and port). Nothing for any
 * other host: a token never goes to a host it was not given for.
 */
/** The named host entry of `git.hosts` for a host (name and port first, then name alone). */
export function gitHostEntry(git: StoredGit, url: { host: string; port: string }): StoredGitHost | undefined {
  const host = url.host.toLowerCase();
  const withPort = url.port ? `${host}:${url.port}` : host;
  return (git.hosts ?? []).find((h) => h.host === withPort) ?? (git.hosts ?? []).find((h) => h.host === host && !h.host.includes(':'));
}

export function gitTokenFor(git: StoredGit, box: SecretBox, url: { transport: string; host: string; port: string }): GitHostToken | undefined {
  if (url.transport !== 'https' && url.transport !== 'http') return undefined;
  const host = url.host.toLowerCase();
  if (url.transport === 'https' && !url.port) {
    if (host === 'github.com' && git.githubToken) return { token: box.open(git.githubToken), provider: 'github' };
    if (host === 'gitlab.com' && git.gitlabToken) return { token: box.open(git.gitlabToken), provider: 'gitlab' };
  }
  const entry = gitHostEntry(git, url);
  if (!entry?.token) return undefined;
  return { token: box.open(entry.token), provider: entry.provider };
}
