/**
 * The fuzzer's request generator: from a seeded PRNG, requests over every route and method of
 * the server (the public API as listed in its OpenAPI document, the admin routes, /mcp, /ping),
 * each valid or broken in one to three ways (bodies, types, depth, size, paths, queries,
 * methods, headers, framing, dropped connections). Same seed, same requests.
 */
import { openApiDocument } from '../../server/openapi-document.ts';
import { POLICY_PATCH_SCHEMA } from '../../server/access/policy.ts';

export interface FuzzRequest {
  method: string;
  /** The request target as sent (path and query, possibly malformed). */
  target: string;
  headers: Array<[string, string]>;
  body: Buffer;
  /** normal: send and read the answer; halfClose: send, then end the socket; abort: send part of the body and drop the connection. */
  mode: 'normal' | 'halfClose' | 'abort';
  /** No Content-Length is added (the mutation sets its own framing). */
  rawFraming?: boolean;
  /** What was done, for the report. */
  tags: string[];
  /** The route it was generated from (`METHOD /path` as listed), for the report's per-route statuses. */
  route: string;
}

export interface FuzzContext {
  port: number;
  memberKey: string;
  adminKey: string;
  /** The library indexed before the run (context answers are real). */
  libraryId: string;
  /** Jobs that exist on the server (its indexing job), for the /api/jobs/{id} routes. */
  jobIds?: string[];
  /** A signed-in admin's web UI session (cookie header value and its CSRF token), for the pages. */
  session?: { cookie: string; csrfToken: string };
}

/** mulberry32: small, fast, and the same sequence for the same seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Dice {
  constructor(readonly next: () => number) {}
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>; items?: JsonSchema; enum?: unknown[]; format?: string; anyOf?: JsonSchema[]; oneOf?: JsonSchema[]; $ref?: string };

interface Route {
  method: string;
  path: string;
  /** form: application/x-www-form-urlencoded, as the web UI's forms post. */
  kind: 'none' | 'json' | 'multipart' | 'binary' | 'mcp' | 'form';
  /**
   * any: anonymous, a member key or an admin key, at random (routes whose answer depends on who asks).
   * session: the web UI's admin session cookie (mostly with its CSRF token and a same-origin Origin), or none.
   */
  auth: 'none' | 'member' | 'admin' | 'any' | 'session';
  query?: (d: Dice, c: FuzzContext) => Record<string, string>;
  /** The library path put for `:lib` (a slash path such as /docs/fuzzlib). */
  lib?: (d: Dice) => string;
  body?: (d: Dice, c: FuzzContext) => unknown;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'PURGE', 'LOCK', 'SEARCH', 'FOO', 'get', 'G ET'];

function weirdString(d: Dice): string {
  switch (d.int(0, 13)) {
    case 0:
      return '';
    case 1:
      return ' \t ';
    case 2:
      return 'a'.repeat(d.int(500, 200_000));
    case 3:
      return 'x\u0000y';
    case 4:
      return '../../../../etc/passwd';
    case 5:
      return '%00%zz%';
    case 6:
      return '<script>alert(1)</script>';
    case 7:
      return '\ud800\udfff\ud800';
    case 8:
      return '🧪'.repeat(d.int(1, 5000));
    case 9:
      return 'rdk_' + 'z'.repeat(d.int(1, 80));
    case 10:
      return '/docs/' + 'n'.repeat(d.int(1, 300));
    case 11:
      return 'https://docs.example.invalid/' + 'p/'.repeat(d.int(0, 50));
    case 12:
      return 'file:///etc/passwd';
    default:
      return '\u202e\u0007\r\n' + String(d.int(0, 1e9));
  }
}

function weirdValue(d: Dice, depth = 0): unknown {
  switch (d.int(0, 11)) {
    case 0:
      return null;
    case 1:
      return d.chance(0.5);
    case 2:
      return d.pick([0, -1, 1.5, -0, 1e308, -1e308, 2 ** 53 + 1, 4294967296, 1e-320]);
    case 3:
    case 4:
      return weirdString(d);
    case 5:
      return depth > 3 ? [] : Array.from({ length: d.int(0, 5) }, () => weirdValue(d, depth + 1));
    case 6:
      return depth > 3 ? {} : Object.fromEntries(Array.from({ length: d.int(0, 5) }, (_, i) => [d.chance(0.5) ? `k${i}` : weirdString(d).slice(0, 40), weirdValue(d, depth + 1)]));
    case 7:
      return JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}') as unknown;
    case 8:
      return Array.from({ length: d.int(1000, 20_000) }, (_, i) => i);
    case 9:
      return '/docs/fuzzlib';
    case 10:
      return ['/docs/fuzzlib', 'MIT', 'websites'];
    default:
      return 'https://docs.example.invalid/llms.txt';
  }
}

/** A value fitting the schema (mostly), for valid bodies. URLs point to hosts that do not exist. */
function fromSchema(s: JsonSchema | undefined, d: Dice, depth = 0): unknown {
  if (!s || depth > 8) return null;
  if (s.enum) return d.pick(s.enum);
  if (s.anyOf || s.oneOf) return fromSchema(d.pick((s.anyOf ?? s.oneOf)!), d, depth + 1);
  const type = Array.isArray(s.type) ? d.pick(s.type) : s.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(s.properties ?? {})) if (d.chance(0.6)) out[k] = fromSchema(v, d, depth + 1);
      return out;
    }
    case 'array':
      return Array.from({ length: d.int(0, 3) }, () => fromSchema(s.items, d, depth + 1));
    case 'string':
      if (s.format === 'uri') return d.pick(['https://docs.example.invalid/llms.txt', 'https://api.example.invalid/openapi.json', 'http://site.example.invalid/docs/']);
      return d.pick(['main', 'fuzz', 'ENG', '/docs/fuzzlib', 'cloud', 'someone@example.invalid']);
    case 'integer':
    case 'number':
      return d.int(0, 10);
    case 'boolean':
      return d.chance(0.5);
    case 'null':
      return null;
    default:
      return d.chance(0.5) ? 'x' : 1;
  }
}

function resolveRef(doc: any, s: any): JsonSchema | undefined {
  if (s && typeof s.$ref === 'string') {
    const parts = s.$ref.replace(/^#\//, '').split('/');
    let v = doc;
    for (const p of parts) v = v?.[p];
    return v;
  }
  return s;
}

/** Values for the OpenAPI document's path parameters: the source kinds of the default distribution (upload is refused on spec routes). */
const PATH_VALUES: Record<string, string[]> = { kind: ['git', 'llmstxt', 'openapi', 'website', 'npm', 'pypi', 'packages', 'confluence', 'upload', 'nope'] };

const QUESTIONS = ['how do I configure the server', 'install', 'what is a widget', 'token budget', 'error handling with retries', ''];

/**
 * Every route: the public ones from the OpenAPI document (the served one, with the add routes of
 * the server's sources; by default the document without them), then the admin routes, /mcp and /ping.
 */
export function listRoutes(served: unknown = openApiDocument()): Route[] {
  const doc = served as any;
  const base = (doc.servers?.[0]?.url as string | undefined) ?? '/api';
  const routes: Route[] = [];
  for (const [p, ops] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      const path = base + p;
      const params = ((op.parameters ?? []) as unknown[]).map((x) => resolveRef(doc, x) as any).filter((x) => x?.in === 'query');
      const content = op.requestBody?.content ?? {};
      const kind: Route['kind'] = content['multipart/form-data'] ? 'multipart' : content['application/json'] ? 'json' : 'none';
      const schema = resolveRef(doc, content['application/json']?.schema);
      const auth: Route['auth'] = method === 'patch' ? 'admin' : method === 'post' ? 'member' : 'none';
      routes.push({
        method: method.toUpperCase(),
        path,
        kind,
        auth,
        query: params.length
          ? (d, c) => {
              const q: Record<string, string> = {};
              for (const prm of params) {
                if (!d.chance(0.85)) continue;
                const name = prm.name as string;
                if (name === 'libraryId') q[name] = d.chance(0.8) ? c.libraryId : d.pick(['/docs/nope', 'fuzzlib', '/docs/fuzzlib/v9', '//']);
                else if (name === 'libraryName') q[name] = d.pick(['fuzzlib', 'fuzz', 'refdesk', 'zzz']);
                else if (name === 'query') q[name] = d.pick(QUESTIONS);
                else if (name === 'type') q[name] = d.pick(['json', 'txt', 'xml']);
                else if (name === 'tokens') q[name] = d.pick(['500', '5000', '0', '-1', '99999999999', 'abc']);
                else q[name] = d.pick(['true', 'false', '1', '']);
              }
              return q;
            }
          : undefined,
        body:
          kind === 'json'
            ? (d, c) => {
                if (p === '/v1/refresh') return { libraryName: d.chance(0.7) ? c.libraryId : '/docs/missing' };
                if (p === '/v2/policies') {
                  const patch = fromSchema(POLICY_PATCH_SCHEMA as unknown as JsonSchema, d) as any;
                  // Keep the indexed library visible so context answers stay real.
                  delete patch?.sourceTypes?.disable;
                  if (patch?.libraryFilters) delete patch.libraryFilters.mode;
                  return patch;
                }
                return fromSchema(schema, d);
              }
            : undefined,
      });
    }
  }
  const admin = '/api/admin';
  routes.push(
    { method: 'GET', path: `${admin}/libraries`, kind: 'none', auth: 'none' },
    { method: 'GET', path: `${admin}/jobs/:id`, kind: 'none', auth: 'none' },
    { method: 'GET', path: `${admin}/keys`, kind: 'none', auth: 'none' },
    { method: 'POST', path: `${admin}/keys`, kind: 'json', auth: 'none', body: (d) => ({ name: 'fuzz', ...(d.chance(0.5) ? { plan: d.pick(['free', 'pro', 'gold']) } : {}), ...(d.chance(0.5) ? { role: d.pick(['member', 'admin', 'root']) } : {}) }) },
    { method: 'DELETE', path: `${admin}/keys/:id`, kind: 'none', auth: 'none' },
    { method: 'POST', path: `${admin}/rename`, kind: 'json', auth: 'none', body: (d) => ({ from: d.pick(['/docs/missing', '/docs/other', 'fuzzlib']), to: d.pick(['/docs/renamed', '/x', '']) }) },
    { method: 'GET', path: `${admin}/settings`, kind: 'none', auth: 'none' },
    { method: 'PATCH', path: `${admin}/settings`, kind: 'json', auth: 'none', body: () => ({ 'mcp.requireKey': false }) },
    {
      method: 'POST',
      path: `${admin}/add`,
      kind: 'json',
      auth: 'none',
      body: (d) => ({
        source: d.pick(['llmstxt', 'website', 'openapi', 'git', 'upload', 'npm', 'nope']),
        spec: d.pick([{ url: 'https://docs.example.invalid/llms.txt' }, { url: 'https://git.example.invalid/a/b' }, {}, { path: '/etc' }]),
        ...(d.chance(0.3) ? { title: 'Fuzz' } : {}),
      }),
    },
    { method: 'POST', path: `${admin}/upload`, kind: 'binary', auth: 'none', query: (d) => ({ name: d.pick(['fuzzup', 'x', '']) }) },
    { method: 'GET', path: '/api/settings', kind: 'none', auth: 'admin' },
    {
      method: 'PATCH',
      path: '/api/settings',
      kind: 'json',
      auth: 'admin',
      // Only loopback or unusable endpoints: the provider test below must not reach the internet.
      body: (d) => d.pick<Record<string, unknown>>([
        { anonymous: { refresh: d.chance(0.5), parse: false } },
        { llm: { provider: 'custom', baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKey: 'sk-fuzz-0123456789' } },
        { llm: { provider: d.pick(['custom', 'mistral', null]) } },
        { embedding: { provider: 'openai', baseUrl: d.pick(['http://127.0.0.1:9/v1', 'ftp://x', 'not a url']) } },
        { git: { hosts: [{ host: d.pick(['git.example.invalid', 'https://x/y', '']), provider: d.pick(['gitlab', 'svn']) }] } },
        { mcp: { requireKey: 'no' } },
        { llm: null, embedding: null },
        { uploads: d.chance(0.2) ? null : { maxBytes: d.pick<unknown>([4096, 1_000_000, null, 0, -1, 1.5, 'x', 1e12]), maxFiles: d.pick<unknown>([1, 50, null, 0, 'many']) } },
      ]),
    },
    { method: 'POST', path: '/api/settings/test', kind: 'json', auth: 'admin', body: (d) => ({ timeoutMs: d.pick([200, 0, 'x']) }) },
    { method: 'GET', path: '/api/setup', kind: 'none', auth: 'admin' },
    ...operatorRoutes(),
    { method: 'POST', path: '/mcp', kind: 'mcp', auth: 'none' },
    { method: 'GET', path: '/mcp', kind: 'none', auth: 'none' },
    { method: 'DELETE', path: '/mcp', kind: 'none', auth: 'none' },
    { method: 'GET', path: '/ping', kind: 'none', auth: 'none' },
  );
  return routes;
}

const LIBRARY_PATHS = ['/docs/fuzzlib', '/docs/fuzzup', '/docs/missing', '/owner/repo', '/docs/fuzzlib/v9', '/', '/docs/%E0%A4%A', '/docs/..%2F..', '/docs/' + 'n'.repeat(600)];
/** Library paths a DELETE may name: never the indexed library (context answers stay real). */
const DELETE_PATHS = LIBRARY_PATHS.filter((p) => !p.startsWith('/docs/fuzzlib'));
const JOB_IDS = ['00000000-0000-0000-0000-000000000000', 'x', '%E0%A4%A', '..', 'a'.repeat(300), '1'];
const jobQuery = (d: Dice): Record<string, string> => ({
  ...(d.chance(0.4) ? { token: d.pick(['', 'x', 'rdk_nope', 'a'.repeat(2000)]) } : {}),
  ...(d.chance(0.3) ? { after: d.pick(['0', '5', '-1', 'abc', '1e99', '99999999999999999999']) } : {}),
});

/**
 * The operator lifecycle routes (issue 19): parse, libraries, jobs, sources, upload, support
 * bundle, health/ready, auth, audit, licence. Many are sent with an admin key so that the
 * requests get past the permission checks to the parts that read input.
 */
function operatorRoutes(): Route[] {
  const lib = (d: Dice) => d.pick(LIBRARY_PATHS);
  return [
    {
      method: 'POST',
      path: '/api/parse',
      kind: 'json',
      auth: 'any',
      // Hosts that do not exist (the jobs fail by design), and addresses the route refuses.
      body: (d) => ({ url: d.pick(['https://git.example.invalid/fuzz/repo', 'https://github.example.invalid/o/r/tree/main/docs', 'http://git.example.invalid/a/b', 'file:///etc', 'git@github.com:o/r.git', 'https://u:p@git.example.invalid/a/b', 'https://git.example.invalid/', 'ssh://git.example.invalid/a/b', '']) }),
    },
    { method: 'GET', path: '/api/libraries', kind: 'none', auth: 'any', query: (d): Record<string, string> => (d.chance(0.5) ? { state: d.pick(['finalized', 'x', '']), limit: d.pick(['1', '0', '-3', 'abc']) } : {}) },
    { method: 'GET', path: '/api/libraries:lib', kind: 'none', auth: 'any', lib },
    { method: 'POST', path: '/api/libraries:lib/refresh', kind: 'none', auth: 'any', lib },
    { method: 'DELETE', path: '/api/libraries:lib', kind: 'none', auth: 'any', lib: (d) => d.pick(DELETE_PATHS) },
    { method: 'GET', path: '/api/jobs', kind: 'none', auth: 'any', query: (d) => ({ ...(d.chance(0.5) ? { libraryId: d.pick(['/docs/fuzzlib', 'x', '']) } : {}), ...(d.chance(0.5) ? { state: d.pick(['queued', 'running', 'failed', 'nope']) } : {}), ...(d.chance(0.5) ? { limit: d.pick(['1', '1000', '1001', '-1', 'x']) } : {}) }) },
    { method: 'GET', path: '/api/jobs/:job', kind: 'none', auth: 'any', query: jobQuery },
    { method: 'GET', path: '/api/jobs/:job/log', kind: 'none', auth: 'any', query: jobQuery },
    { method: 'GET', path: '/api/jobs/:job/events', kind: 'none', auth: 'any', query: jobQuery },
    { method: 'POST', path: '/api/jobs/:job/cancel', kind: 'none', auth: 'any' },
    { method: 'GET', path: '/api/sources', kind: 'none', auth: 'any' },
    { method: 'POST', path: '/api/libraries/upload', kind: 'multipart', auth: 'any' },
    { method: 'GET', path: '/api/support-bundle', kind: 'none', auth: 'any' },
    { method: 'GET', path: '/api/health', kind: 'none', auth: 'none' },
    { method: 'HEAD', path: '/api/health', kind: 'none', auth: 'none' },
    { method: 'GET', path: '/api/ready', kind: 'none', auth: 'none' },
    {
      method: 'POST',
      path: '/api/auth/login',
      kind: 'json',
      auth: 'none',
      body: (d) => ({ ...(d.chance(0.8) ? { username: d.pick(['admin', 'root', '', 'a'.repeat(300)]) } : {}), ...(d.chance(0.8) ? { password: d.pick(['admin', 'wrong', '', 'p'.repeat(5000)]) } : {}), ...(d.chance(0.2) ? { setupToken: d.pick(['x', '']) } : {}) }),
    },
    { method: 'POST', path: '/api/auth/logout', kind: 'json', auth: 'none', body: (d) => (d.chance(0.5) ? {} : { all: d.pick([true, false, 'yes', 1]) }) },
    { method: 'GET', path: '/api/auth/session', kind: 'none', auth: 'any' },
    { method: 'POST', path: '/api/auth/credentials', kind: 'json', auth: 'any', body: (d) => ({ currentPassword: d.pick(['admin', 'x']), ...(d.chance(0.5) ? { newUsername: d.pick(['ops', '', 'a'.repeat(300)]) } : {}), newPassword: d.pick(['correct horse battery', 'short', '']) }) },
    { method: 'GET', path: '/api/audit', kind: 'none', auth: 'any', query: (d) => ({ ...(d.chance(0.5) ? { limit: d.pick(['1', '500', '501', '-1', 'x']) } : {}), ...(d.chance(0.3) ? { before: d.pick(['1', '0', 'x', '99999999999999999999']) } : {}) }) },
    { method: 'GET', path: '/api/license', kind: 'none', auth: 'any' },
    ...uiRoutes(),
  ];
}

/**
 * The web UI's pages and forms (server/ui/pages). Sign-out routes are posted without the
 * session so that the run keeps its session; the credentials form gets wrong current passwords.
 */
function uiRoutes(): Route[] {
  const text = (d: Dice) => (d.chance(0.6) ? d.pick(['', 'install', 'docs', 'x']) : weirdString(d).slice(0, 2000));
  const libPath = (d: Dice) => d.pick(['/docs/fuzzlib', '/docs/fuzzlib', '/docs/missing', '/docs/fuzzlib/v1', '/a/b/c/d/e', '/%2e%2e/%2e%2e/etc']);
  return [
    { method: 'GET', path: '/', kind: 'none', auth: 'session' },
    { method: 'GET', path: '/login', kind: 'none', auth: 'none', query: (d): Record<string, string> => (d.chance(0.5) ? { next: d.pick(['/libraries', '//evil.example', 'https://evil.example/', '/\\evil', text(d)]) } : {}) },
    { method: 'POST', path: '/login', kind: 'form', auth: 'none', body: (d) => ({ username: d.pick(['admin', 'fuzz-admin', '', text(d)]), password: d.pick(['wrong', '', text(d)]), next: d.pick(['/libraries', '//evil.example', text(d)]) }) },
    { method: 'GET', path: '/logout', kind: 'none', auth: 'none', query: (d): Record<string, string> => (d.chance(0.5) ? { all: d.pick(['1', '0', 'x']) } : {}) },
    { method: 'POST', path: '/logout', kind: 'form', auth: 'none', body: (d) => ({ all: d.pick(['1', '', 'x']) }) },
    { method: 'GET', path: '/libraries', kind: 'none', auth: 'session', query: (d) => ({ ...(d.chance(0.5) ? { q: text(d) } : {}), ...(d.chance(0.5) ? { state: d.pick(['finalized', 'failed', 'x', '']) } : {}) }) },
    { method: 'GET', path: '/libraries:lib', kind: 'none', auth: 'session', lib: libPath, query: (d): Record<string, string> => (d.chance(0.4) ? { q: text(d), tab: d.pick(['log', 'versions', 'x']) } : {}) },
    { method: 'POST', path: '/libraries:lib', kind: 'form', auth: 'session', lib: (d) => d.pick(['/docs/missing', '/docs/fuzzlib/v9', '/x']), body: (d) => ({ action: d.pick(['refresh', 'delete', 'ask', 'x', '']), confirm: d.pick(['', 'yes', text(d)]), question: text(d) }) },
    { method: 'GET', path: '/add', kind: 'none', auth: 'session', query: (d): Record<string, string> => (d.chance(0.6) ? { kind: d.pick(['git', 'website', 'llms-txt', 'openapi', 'package', 'upload', 'nope', text(d)]) } : {}) },
    { method: 'GET', path: '/add/queued', kind: 'none', auth: 'none', query: (d, c) => ({ job: c.jobIds?.length && d.chance(0.5) ? d.pick(c.jobIds) : text(d), token: d.pick(['', 'x', text(d)]) }) },
    { method: 'POST', path: '/add', kind: 'form', auth: 'session', query: (d) => ({ kind: d.pick(['git', 'website', 'llms-txt', 'openapi', 'nope']) }), body: (d) => ({ kind: d.pick(['git', 'website', 'llms-txt', 'nope', '']), url: d.pick(['https://docs.example.invalid/llms.txt', 'file:///etc/passwd', 'http://127.0.0.1:1/', text(d)]), 'spec.url': text(d), name: text(d) }) },
    { method: 'GET', path: '/settings', kind: 'none', auth: 'session', query: (d): Record<string, string> => (d.chance(0.4) ? { section: d.pick(['providers', 'git', 'access', 'keys', 'policies', 'audit', 'x']), before: d.pick(['1', 'x', '-5']) } : {}) },
    { method: 'POST', path: '/settings/providers', kind: 'form', auth: 'session', body: (d) => ({ 'llm.provider': d.pick(['custom', 'openai', 'nope', '']), 'llm.model': text(d), 'llm.baseUrl': d.pick(['http://127.0.0.1:1/v1', 'not a url', text(d)]), 'llm.apiKey': d.pick(['', 'sk-fuzz-planted', text(d)]), 'embedding.provider': d.pick(['', 'openai', 'x']) }) },
    { method: 'POST', path: '/settings/git', kind: 'form', auth: 'session', body: (d) => ({ host: d.pick(['github.com', '', text(d)]), token: d.pick(['', 'ghp_fuzz', text(d)]) }) },
    { method: 'POST', path: '/settings/access', kind: 'form', auth: 'session', body: (d) => ({ parse: d.pick(['on', 'off', '', 'x']), refresh: d.pick(['on', 'off', 'x']), delete: d.pick(['off', 'x']), supportBundle: d.pick(['off', '']) }) },
    { method: 'POST', path: '/settings/test', kind: 'form', auth: 'session', body: (d) => ({ what: d.pick(['llm', 'embedding', 'x', '']) }) },
    { method: 'POST', path: '/settings/credentials', kind: 'form', auth: 'session', body: (d) => ({ currentPassword: d.pick(['wrong', '', text(d)]), newUsername: text(d), newPassword: d.pick(['short', text(d)]), repeatPassword: text(d) }) },
    { method: 'POST', path: '/settings/keys', kind: 'form', auth: 'session', body: (d) => ({ name: text(d), plan: d.pick(['free', 'pro', 'x', '']), role: d.pick(['member', 'admin', 'root', '']) }) },
    { method: 'POST', path: '/settings/keys/:id/revoke', kind: 'form', auth: 'session', body: () => ({}) },
    { method: 'POST', path: '/settings/policies', kind: 'form', auth: 'session', body: (d) => ({ policy: text(d), json: d.pick(['{}', '{"x":1}', '[', text(d)]) }) },
    { method: 'GET', path: '/setup', kind: 'none', auth: 'session', query: (d): Record<string, string> => (d.chance(0.5) ? { step: d.pick(['credentials', 'llm', 'embedding', 'x']), again: d.pick(['1', '0']) } : {}) },
    { method: 'POST', path: '/setup', kind: 'form', auth: 'session', body: (d) => ({ step: d.pick(['llm', 'embedding', 'credentials', 'x', '']), action: d.pick(['save', 'skip', 'test', 'x']), again: d.pick(['1', '']), provider: d.pick(['custom', 'openai', 'x']), model: text(d), baseUrl: text(d) }) },
    { method: 'GET', path: '/ui/assets/:id', kind: 'none', auth: 'none' },
    { method: 'GET', path: '/ui/assets/app.js', kind: 'none', auth: 'none' },
  ];
}

function mcpMessage(d: Dice, c: FuzzContext): unknown {
  const id = d.pick<unknown>([1, 'a', 0, -1, 2 ** 60, null, { o: 1 }, [1], 1.5]);
  const tool = d.pick(['resolve-library-id', 'query-docs', 'get-library-docs', 'nope']);
  const args = d.pick<unknown>([
    { libraryName: 'fuzzlib', query: d.pick(QUESTIONS) },
    { libraryId: c.libraryId, query: d.pick(QUESTIONS) },
    { context7CompatibleLibraryID: c.libraryId, topic: 'install', tokens: d.pick([10, 5000, -5, 'x']) },
    {},
    weirdValue(d),
  ]);
  const one = () =>
    d.pick<unknown>([
      { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: d.pick(['2025-06-18', '2024-11-05', '1999-01-01', 7]), capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } },
      { jsonrpc: '2.0', id, method: 'tools/list', params: {} },
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: args } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id, method: 'ping' },
      { jsonrpc: '2.0', id, method: d.pick(['resources/list', 'prompts/get', 'x/y', '']), params: weirdValue(d) },
      { jsonrpc: '1.0', id, method: 'tools/list' },
      { id, method: 'tools/call', params: weirdValue(d) },
    ]);
  return d.chance(0.1) ? Array.from({ length: d.int(0, 5) }, one) : one();
}

/** A multipart body for POST /api/libraries/upload: fields and files, valid or odd (names, archives, duplicates). */
function uploadBody(d: Dice, boundary: string): Buffer {
  const out: Buffer[] = [];
  const field = (name: string, value: string) => out.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  if (d.chance(0.85)) field('name', d.pick(['fuzzup', 'fuzzup', '', 'a'.repeat(300), '../x', 'Fuzz Up', '🧪']));
  if (d.chance(0.3)) field('version', d.pick(['v1', '', 'latest', '../..']));
  if (d.chance(0.2)) field('title', weirdString(d).slice(0, 400));
  if (d.chance(0.1)) field(d.pick(['unknown', 'name']), 'x');
  for (let i = 0, n = d.int(0, 3); i < n; i++) {
    const filename = d.pick(['README.md', 'guide/intro.md', '../escape.md', '/abs.md', 'C:\\x.md', 'a\u0001b.md', 'docs.zip', 'docs.tar.gz', '', 'x'.repeat(600)]);
    const content = filename.endsWith('.zip') ? Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), randomBytes(d, d.int(0, 300))]) : filename.endsWith('.gz') ? Buffer.concat([Buffer.from([0x1f, 0x8b]), randomBytes(d, d.int(0, 300))]) : Buffer.from(`# Uploaded ${i}\n\nSome text about widgets.\n`);
    out.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${d.chance(0.9) ? 'file' : 'other'}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`, 'latin1'), content, Buffer.from('\r\n'));
  }
  out.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(out);
}

function nested(depth: number, kind: 'object' | 'array'): string {
  return kind === 'object' ? '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) : '['.repeat(depth) + ']'.repeat(depth);
}

function randomBytes(d: Dice, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = d.int(0, 255);
  return b;
}

function caseVariant(d: Dice, path: string): string {
  let out = '';
  for (const ch of path) out += d.chance(0.3) ? (ch === ch.toUpperCase() ? ch.toLowerCase() : ch.toUpperCase()) : ch;
  return out === path ? path.toUpperCase() : out;
}

function encodeQuery(q: Record<string, string>): string {
  const s = new URLSearchParams(q).toString();
  return s ? `?${s}` : '';
}

/** One generated request (numbered `i` for the report). */
export function generateRequest(d: Dice, routes: Route[], c: FuzzContext): FuzzRequest {
  const route = d.pick(routes);
  const tags: string[] = [];
  let method = route.method;
  let path = route.path
    .replace(':id', () => d.pick(JOB_IDS))
    .replace(':job', () => (c.jobIds?.length && d.chance(0.5) ? d.pick(c.jobIds) : d.pick(JOB_IDS)))
    .replace(':lib', () => route.lib!(d))
    // OpenAPI path parameters ({kind} of the generic add route): a real value, mostly.
    .replace(/\{(\w+)\}/g, (_m, name: string) => (d.chance(0.8) && PATH_VALUES[name] ? d.pick(PATH_VALUES[name]) : weirdString(d).slice(0, 200)));
  let query = encodeQuery(route.query?.(d, c) ?? {});
  const headers: Array<[string, string]> = [
    ['Host', `127.0.0.1:${c.port}`],
    ['Connection', 'close'],
  ];
  const key =
    route.auth === 'admin'
      ? c.adminKey
      : route.auth === 'member'
        ? d.chance(0.5) ? c.memberKey : c.adminKey
        : route.auth === 'any'
          ? d.pick(['', c.memberKey, c.adminKey, c.adminKey])
          : d.chance(0.3) ? c.memberKey : '';
  if (key && route.auth !== 'session' && d.chance(0.9)) headers.push(['Authorization', `Bearer ${key}`]);
  const session = route.auth === 'session' && c.session && d.chance(0.9) ? c.session : null;
  if (session) {
    headers.push(['Cookie', session.cookie]);
    if (d.chance(0.7)) headers.push(['Origin', `http://127.0.0.1:${c.port}`]);
    if (route.kind === 'none' && route.method !== 'GET' && d.chance(0.8)) headers.push(['X-CSRF-Token', session.csrfToken]);
    if (d.chance(0.2)) headers.push(['HX-Request', 'true']);
  }
  let body: Buffer = Buffer.alloc(0);
  let value: unknown;
  if (route.kind === 'form') {
    const fields = { ...(route.body!(d, c) as Record<string, string>) };
    if (session && d.chance(0.85)) fields._csrf = d.chance(0.9) ? session.csrfToken : d.pick(['', 'x', session.csrfToken + 'x']);
    value = fields;
    headers.push(['Content-Type', 'application/x-www-form-urlencoded']);
  } else if (route.kind === 'json') {
    value = route.body!(d, c);
    headers.push(['Content-Type', 'application/json']);
  } else if (route.kind === 'mcp') {
    value = mcpMessage(d, c);
    headers.push(['Content-Type', 'application/json'], ['Accept', d.chance(0.9) ? 'application/json, text/event-stream' : d.pick(['text/html', '*/*', 'application/json'])]);
    if (d.chance(0.2)) headers.push(['MCP-Protocol-Version', d.pick(['2025-06-18', '2026-07-28', 'garbage', ''])]);
  } else if (route.kind === 'multipart') {
    const boundary = `----fuzz${d.int(0, 1e9)}`;
    if (route.path === '/api/libraries/upload') {
      body = uploadBody(d, boundary);
    } else {
      const spec = JSON.stringify({ openapi: '3.0.0', info: { title: 'Fuzz API', version: '1' }, paths: { '/things': { get: { summary: 'List things' } } } });
      const parts =
        `--${boundary}\r\nContent-Disposition: form-data; name="libraryTitle"\r\n\r\nfuzz spec ${d.int(0, 1e6)}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="${d.chance(0.9) ? 'openapiFile' : 'other'}"; filename="spec.json"\r\nContent-Type: application/json\r\n\r\n${spec}\r\n--${boundary}--\r\n`;
      body = Buffer.from(parts);
    }
    headers.push(['Content-Type', `multipart/form-data; boundary=${boundary}`]);
    const cut = d.int(0, 3);
    if (cut === 1) {
      body = body.subarray(0, d.int(0, body.length - 1));
      tags.push('multipart-truncated');
    } else if (cut === 2) {
      body = Buffer.concat([body.subarray(0, d.int(0, body.length)), randomBytes(d, d.int(1, 200))]);
      tags.push('multipart-garbage');
    }
  } else if (route.kind === 'binary') {
    body = randomBytes(d, d.int(0, 4096));
    headers.push(['Content-Type', 'application/gzip']);
  }

  let mode: FuzzRequest['mode'] = 'normal';
  let rawFraming = false;
  const mutations = d.chance(0.2) ? 0 : d.int(1, 3);
  if (mutations === 0) tags.push('valid');
  let bodyText: string | null = value === undefined ? null : route.kind === 'form' ? new URLSearchParams(value as Record<string, string>).toString() : JSON.stringify(value) ?? 'null';
  for (let m = 0; m < mutations; m++) {
    const what = d.int(0, 19);
    switch (what) {
      case 0: // wrong types for fields
        if (value && typeof value === 'object' && !Array.isArray(value)) {
          const obj = { ...(value as Record<string, unknown>) };
          const keys = Object.keys(obj);
          const k = keys.length && d.chance(0.7) ? d.pick(keys) : weirdString(d).slice(0, 30) || 'k';
          obj[k] = weirdValue(d);
          value = obj;
          bodyText = JSON.stringify(value);
          tags.push(`type:${k.slice(0, 20)}`);
        } else {
          bodyText = JSON.stringify(weirdValue(d)) ?? 'null';
          tags.push('body-weird-value');
        }
        break;
      case 1: // top-level wrong JSON type
        bodyText = d.pick(['[]', 'null', '0', '1e999', '"string"', 'true', '[{}]', '-']);
        tags.push(`top:${bodyText}`);
        break;
      case 2: // truncated JSON
        if (bodyText) bodyText = bodyText.slice(0, d.int(0, Math.max(0, bodyText.length - 1)));
        tags.push('json-truncated');
        break;
      case 3: // deep nesting
        bodyText = d.chance(0.5) ? nested(d.int(60, 20_000), d.pick(['object', 'array'] as const)) : `{"x":${nested(d.int(60, 5000), 'object')}}`;
        tags.push(`deep:${bodyText.length}`);
        break;
      case 4: // many keys
        bodyText = JSON.stringify(Object.fromEntries(Array.from({ length: d.int(1000, 100_000) }, (_, i) => [`k${i}`, i])));
        tags.push(`many-keys:${bodyText.length}`);
        break;
      case 5: // a huge string
        bodyText = JSON.stringify({ ...(typeof value === 'object' && value && !Array.isArray(value) ? value : {}), [d.pick(['query', 'name', 'docsRepoUrl', 'libraryName', 'x'])]: 'h'.repeat(d.int(10_000, 3_000_000)) });
        tags.push(`huge-string:${bodyText.length}`);
        break;
      case 6: // garbage bytes / invalid UTF-8 / NUL
        body = randomBytes(d, d.int(1, 2000));
        bodyText = null;
        tags.push('garbage-body');
        break;
      case 7: // content type
        setHeader(headers, 'Content-Type', d.pick(['text/plain', 'application/json; charset=utf-16', 'multipart/form-data', 'application/x-www-form-urlencoded', 'application/json, text/plain', '', 'multipart/form-data; boundary=', 'application/jsonx']));
        tags.push('content-type');
        break;
      case 8: // duplicate headers
        headers.push(['Content-Type', d.pick(['text/plain', 'application/json'])], ['Authorization', 'Bearer rdk_dup'], ['Host', 'evil.example']);
        tags.push('duplicate-headers');
        break;
      case 9: // framing: bad Content-Length / Transfer-Encoding
        rawFraming = true;
        {
          const b = bodyText !== null ? Buffer.from(bodyText) : body;
          const kind = d.int(0, 5);
          if (kind === 0) headers.push(['Content-Length', 'abc']);
          else if (kind === 1) headers.push(['Content-Length', '-5']);
          else if (kind === 2) headers.push(['Content-Length', String(b.length)], ['Content-Length', String(b.length + 3)]);
          else if (kind === 3) headers.push(['Content-Length', String(b.length)], ['Transfer-Encoding', 'chunked']);
          else if (kind === 4) {
            headers.push(['Transfer-Encoding', 'chunked']);
            // A chunk size larger than what follows leaves the server waiting for the rest: end the socket.
            mode = 'halfClose';
            bodyText = null;
            body = Buffer.from(`${d.pick(['zz', '5', 'fffffffff', '-1'])}\r\n${b.subarray(0, 10).toString('latin1')}\r\n0\r\n\r\n`, 'latin1');
          } else {
            headers.push(['Content-Length', String(b.length + d.int(1, 1000))]);
            mode = 'halfClose';
          }
          tags.push(`framing:${kind}`);
        }
        break;
      case 10: // path case variants and near misses
        path = d.chance(0.6) ? caseVariant(d, path) : d.pick([path + '/', path.replace(/\//g, '//'), path.replace('/api/', '/api/./'), path.replace('/api/', '/api/x/../'), path + '%2F', path + ';x']);
        tags.push('path-variant');
        break;
      case 11: // percent-encoding in the path
        path = d.pick([path + '%', path + '%zz', path + '%00', path.replace(/[a-z]/, (ch) => `%${ch.charCodeAt(0).toString(16)}`), path + '/%E0%A4%A', path + '%C0%AF']);
        tags.push('path-encoding');
        break;
      case 12: // query oddities
        query = d.pick([
          `${query}&libraryId=%zz`,
          `${query}&query=%`,
          `${query}&libraryId=a&libraryId=b&query=q&query=r`,
          `?&&&=&==`,
          `?libraryId[]=x&query[a]=b`,
          `${query}&query=${'q'.repeat(d.int(1000, 60_000))}`,
          `${query}&libraryId=%00&query=%00`,
          `?${'a='.repeat(d.int(100, 5000))}`,
          `${query}&type=%E0%A4%A`,
        ]);
        tags.push('query');
        break;
      case 13: // method
        method = d.pick(METHODS);
        tags.push(`method:${method}`);
        break;
      case 14: // authorization oddities
        setHeader(headers, 'Authorization', d.pick(['Bearer', 'Bearer ', 'Basic YTpi', 'Bearer rdk_' + 'x'.repeat(d.int(1, 5000)), 'bearer ' + c.memberKey, 'Bearer ' + c.memberKey + ' extra', '\u00ff\u00fe']));
        if (d.chance(0.3)) headers.push(['REFDESK_API_KEY', d.pick(['', 'rdk_nope', c.memberKey])]);
        tags.push('auth');
        break;
      case 15: // other headers
        {
          const h = d.int(0, 7);
          if (h === 0) headers.push(['X-Long', 'l'.repeat(d.int(1000, 40_000))]);
          else if (h === 1) for (let i = 0; i < d.int(50, 300); i++) headers.push([`X-H${i}`, String(i)]);
          else if (h === 2) setHeader(headers, 'Host', d.pick(['', 'evil.example', 'localhost:1', '[::1]', '127.0.0.1:99999', 'a b']));
          else if (h === 3) headers.push(['Origin', d.pick(['http://evil.example', 'null', 'file://', 'http://127.0.0.1'])]);
          else if (h === 4) headers.push(['If-None-Match', d.pick(['*', '"x"', 'W/"', ',,,'])]);
          else if (h === 5) headers.push(['Expect', '100-continue']);
          else if (h === 6) headers.push(['Accept-Encoding', 'gzip, br, zstd'], ['Accept', 'text/event-stream']);
          else headers.push(['X-Forwarded-For', '10.0.0.1, 1.2.3.4']);
          tags.push(`header:${h}`);
        }
        break;
      case 16: // NUL and control bytes in the request line
        path = path + d.pick(['\u0000', '\u0001', ' x', '\t']);
        tags.push('request-line-control');
        break;
      case 17: // a very long URL
        path = path + '/' + 'u'.repeat(d.int(2000, 100_000));
        tags.push('long-url');
        break;
      case 18: // dropped connection mid-body
        mode = 'abort';
        tags.push('abort');
        break;
      default: // unknown fields and empty body
        if (d.chance(0.5)) {
          bodyText = '';
          tags.push('empty-body');
        } else {
          bodyText = JSON.stringify({ ...(typeof value === 'object' && value && !Array.isArray(value) ? value : {}), unknownField: weirdValue(d) });
          tags.push('unknown-field');
        }
    }
  }
  if (bodyText !== null && (route.kind === 'json' || route.kind === 'mcp' || route.kind === 'form' || tags.some((t) => t.startsWith('deep') || t.startsWith('many') || t.startsWith('huge') || t.startsWith('top') || t === 'body-weird-value'))) {
    body = Buffer.from(bodyText);
  }
  return { method, target: path + query, headers, body, mode, rawFraming, tags, route: `${route.method} ${route.path}` };
}

function setHeader(headers: Array<[string, string]>, name: string, value: string): void {
  for (let i = headers.length - 1; i >= 0; i--) if (headers[i][0].toLowerCase() === name.toLowerCase()) headers.splice(i, 1);
  headers.push([name, value]);
}

export { Dice };
