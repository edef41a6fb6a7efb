/**
 * One model of an API for every dialect: Swagger 2.0 and OpenAPI 3.0/3.1 documents (already
 * dereferenced) become the same list of operations, tags, servers and auth schemes.
 */
import type { SpecVersion } from './parse-spec.ts';

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export type Schema = Record<string, any>;

export interface ParamModel {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  description: string;
  schema: Schema | undefined;
  example: unknown;
  deprecated: boolean;
}

export interface BodyModel {
  mediaType: string;
  required: boolean;
  description: string;
  schema: Schema | undefined;
  /** An example the spec gives for the whole body (media type example/examples, or schema example). */
  example: unknown;
}

export interface ResponseModel {
  status: string;
  description: string;
  mediaType: string;
  schema: Schema | undefined;
}

export interface SecuritySchemeModel {
  name: string;
  /** http (scheme basic/bearer/...), apiKey (in header/query/cookie), oauth2, openIdConnect, mutualTLS. */
  type: string;
  scheme?: string;
  bearerFormat?: string;
  in?: string;
  paramName?: string;
  description: string;
  /** oauth2: flow names with their URLs, for the auth snippet. */
  flows: string[];
}

export interface OperationModel {
  method: string;
  path: string;
  /** The path as the client calls it: the server's base path joined with the operation path. */
  displayPath: string;
  operationId: string;
  /** A short name for the title: the summary when short, else from the operationId. */
  name: string;
  /** Summary (when it is not the name) and description, markdown from the spec. */
  text: string;
  tag: string;
  deprecated: boolean;
  params: ParamModel[];
  body: BodyModel | undefined;
  responses: ResponseModel[];
  /** The first way to authenticate (scheme names that go together); empty when none is needed. */
  auth: SecuritySchemeModel[];
  /** Whether calling without credentials is one of the allowed alternatives. */
  authOptional: boolean;
  baseUrl: string;
  /** A ready curl/shell sample from the spec (x-codeSamples), when it gives one. */
  curlSample: string | undefined;
}

export interface TagModel {
  name: string;
  description: string;
  operations: OperationModel[];
}

export interface ApiModel {
  version: SpecVersion;
  title: string;
  apiVersion: string;
  description: string;
  servers: Array<{ url: string; description: string }>;
  tags: TagModel[];
  schemes: SecuritySchemeModel[];
  /** Scheme names required by default (the top-level security), alternatives joined by ' or '. */
  defaultAuth: string[];
  operationCount: number;
}

const UNTAGGED = 'Other';

function str(v: unknown): string {
  return typeof v === 'string' ? v.trim() : '';
}

/** Builds the model. `specUrl` resolves relative server URLs (OpenAPI) or a missing host (Swagger). */
export function buildModel(api: Record<string, any>, version: SpecVersion, specUrl: string | undefined): ApiModel {
  const schemes = securitySchemes(api, version);
  const byName = new Map(schemes.map((s) => [s.name, s]));
  const servers = serverList(api, version, specUrl);
  const rootBase = servers[0]?.url ?? 'https://api.example.com';
  const declared: TagModel[] = [];
  const tagIndex = new Map<string, TagModel>();
  for (const t of Array.isArray(api.tags) ? api.tags : []) {
    const name = str(t?.name);
    if (!name || tagIndex.has(name)) continue;
    const tag = { name, description: str(t.description), operations: [] };
    tagIndex.set(name, tag);
    declared.push(tag);
  }
  let count = 0;
  for (const [path, item] of Object.entries<any>(api.paths ?? {})) {
    if (!item || typeof item !== 'object') continue;
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op || typeof op !== 'object') continue;
      count++;
      const tagName = (Array.isArray(op.tags) ? op.tags.map(str).find((t: string) => t) : '') || UNTAGGED;
      let tag = tagIndex.get(tagName);
      if (!tag) {
        tag = { name: tagName, description: '', operations: [] };
        tagIndex.set(tagName, tag);
        declared.push(tag);
      }
      const base = operationBase(api, version, item, op, specUrl) ?? rootBase;
      const security = resolveSecurity(op.security ?? api.security, byName);
      const summary = str(op.summary);
      const description = str(op.description);
      const name = operationName(summary, str(op.operationId), description);
      const same = (a: string, b: string) => a.replace(/[.\s]+$/, '').toLowerCase() === b.replace(/[.\s]+$/, '').toLowerCase();
      const showSummary = summary && !same(summary, name) && !same(summary, description);
      const text = [showSummary ? summary : '', description && !same(description, name) ? description : ''].filter(Boolean).join('\n\n');
      tag.operations.push({
        method: method.toUpperCase(),
        path,
        displayPath: joinPath(basePathOf(base), path),
        operationId: str(op.operationId),
        name,
        text,
        tag: tagName,
        deprecated: op.deprecated === true,
        params: parameters(item.parameters, op.parameters, version),
        body: requestBody(op, item, version, api),
        responses: responses(op.responses, version, api),
        auth: security.auth,
        authOptional: security.optional,
        baseUrl: base,
        curlSample: curlSample(op),
      });
    }
  }
  const top = resolveSecurity(api.security, byName);
  return {
    version,
    title: str(api.info?.title) || 'API',
    apiVersion: str(api.info?.version),
    description: str(api.info?.description),
    servers,
    tags: declared.filter((t) => t.operations.length > 0),
    schemes,
    defaultAuth: top.auth.map((s) => s.name),
    operationCount: count,
  };
}

/** "Create chat completion" from a short summary, else from the operationId, else the first sentence. */
export function operationName(summary: string, operationId: string, description: string): string {
  const oneLine = summary && !summary.includes('\n') && summary.length <= 100 && !/[*`[\]]/.test(summary);
  if (oneLine) return summary.replace(/\.$/, '');
  if (operationId) return humanize(operationId);
  const first = (summary || description).replace(/\s+/g, ' ').match(/^(.{1,100}?)(\.\s|$)/);
  return first ? first[1] : '';
}

/** `createChatCompletion` / `create_chat_completion` -> "Create chat completion". */
export function humanize(id: string): string {
  const words = id
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => (/^[A-Z0-9]+$/.test(w) && w.length > 1 ? w : w.toLowerCase()));
  if (words.length === 0) return id;
  return words[0][0].toUpperCase() + words[0].slice(1) + (words.length > 1 ? ' ' + words.slice(1).join(' ') : '');
}

function joinPath(base: string, path: string): string {
  const b = base.replace(/\/+$/, '');
  return (b + (path.startsWith('/') ? path : '/' + path)) || '/';
}

function basePathOf(url: string): string {
  try {
    return decodeURI(new URL(url).pathname);
  } catch {
    return url.startsWith('/') ? url : '';
  }
}

function serverUrl(server: any, specUrl: string | undefined): string {
  let url = str(server?.url) || '/';
  const vars = server?.variables ?? {};
  url = url.replace(/\{([^}]+)\}/g, (m, name: string) => {
    const v = vars[name];
    const d = v?.default ?? (Array.isArray(v?.enum) ? v.enum[0] : undefined);
    return d !== undefined ? String(d) : m;
  });
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    const base = specUrl ?? 'https://api.example.com/';
    try {
      url = new URL(url, base).href;
    } catch {
      // keep it as written
    }
  }
  return url.replace(/\/+$/, '');
}

function serverList(api: Record<string, any>, version: SpecVersion, specUrl: string | undefined): Array<{ url: string; description: string }> {
  if (version === 'swagger-2.0') {
    let fallback: URL | undefined;
    try {
      fallback = specUrl ? new URL(specUrl) : undefined;
    } catch {
      fallback = undefined;
    }
    const schemes: string[] = Array.isArray(api.schemes) && api.schemes.length > 0 ? api.schemes : [fallback?.protocol.replace(':', '') ?? 'https'];
    const host = str(api.host) || fallback?.host || 'api.example.com';
    const basePath = str(api.basePath).replace(/\/+$/, '');
    return schemes.map((s) => ({ url: `${s}://${host}${basePath}`, description: '' }));
  }
  const list = Array.isArray(api.servers) && api.servers.length > 0 ? api.servers : [{ url: '/' }];
  return list.map((s: any) => ({ url: serverUrl(s, specUrl), description: str(s?.description) }));
}

function operationBase(api: Record<string, any>, version: SpecVersion, item: any, op: any, specUrl: string | undefined): string | undefined {
  if (version === 'swagger-2.0') return undefined;
  const list = Array.isArray(op.servers) && op.servers.length > 0 ? op.servers : Array.isArray(item.servers) && item.servers.length > 0 ? item.servers : undefined;
  void api;
  return list ? serverUrl(list[0], specUrl) : undefined;
}

function securitySchemes(api: Record<string, any>, version: SpecVersion): SecuritySchemeModel[] {
  const raw = version === 'swagger-2.0' ? api.securityDefinitions : api.components?.securitySchemes;
  const out: SecuritySchemeModel[] = [];
  for (const [name, s] of Object.entries<any>(raw ?? {})) {
    if (!s || typeof s !== 'object') continue;
    let type = str(s.type);
    let scheme = str(s.scheme).toLowerCase() || undefined;
    if (type === 'basic') {
      type = 'http';
      scheme = 'basic';
    }
    const flows: string[] = [];
    if (type === 'oauth2') {
      if (version === 'swagger-2.0') flows.push(`${str(s.flow) || 'flow'}${s.authorizationUrl ? ` (authorization URL ${s.authorizationUrl})` : ''}${s.tokenUrl ? ` (token URL ${s.tokenUrl})` : ''}`);
      for (const [flow, f] of Object.entries<any>(s.flows ?? {})) {
        flows.push(`${flow}${f?.authorizationUrl ? ` (authorization URL ${f.authorizationUrl})` : ''}${f?.tokenUrl ? ` (token URL ${f.tokenUrl})` : ''}`);
      }
    }
    if (type === 'openIdConnect' && s.openIdConnectUrl) flows.push(`discovery at ${s.openIdConnectUrl}`);
    out.push({
      name,
      type,
      ...(scheme ? { scheme } : {}),
      ...(s.bearerFormat ? { bearerFormat: str(s.bearerFormat) } : {}),
      ...(s.in ? { in: str(s.in) } : {}),
      ...(s.name ? { paramName: str(s.name) } : {}),
      description: str(s.description),
      flows,
    });
  }
  return out;
}

function resolveSecurity(req: unknown, byName: Map<string, SecuritySchemeModel>): { auth: SecuritySchemeModel[]; optional: boolean } {
  if (!Array.isArray(req) || req.length === 0) return { auth: [], optional: false };
  let optional = false;
  let first: SecuritySchemeModel[] | null = null;
  for (const alt of req) {
    const names = alt && typeof alt === 'object' ? Object.keys(alt) : [];
    if (names.length === 0) {
      optional = true;
      continue;
    }
    const schemes = names.map((n) => byName.get(n)).filter((s): s is SecuritySchemeModel => !!s);
    if (!first && schemes.length > 0) first = schemes;
  }
  return { auth: first ?? [], optional };
}

function parameters(pathLevel: unknown, opLevel: unknown, version: SpecVersion): ParamModel[] {
  const merged = new Map<string, any>();
  for (const list of [pathLevel, opLevel]) {
    if (!Array.isArray(list)) continue;
    for (const p of list) {
      if (!p || typeof p !== 'object' || typeof p.name !== 'string') continue;
      merged.set(`${p.in}:${p.name}`, p);
    }
  }
  const out: ParamModel[] = [];
  for (const p of merged.values()) {
    if (!['path', 'query', 'header', 'cookie'].includes(p.in)) continue;
    let schema: Schema | undefined = p.schema;
    if (!schema && p.content && typeof p.content === 'object') schema = (Object.values<any>(p.content)[0] ?? {}).schema;
    if (version === 'swagger-2.0' && !schema) {
      const { name: _n, in: _i, description: _d, required: _r, ...rest } = p;
      schema = rest;
    }
    const example = p.example ?? firstExample(p.examples) ?? p['x-example'];
    out.push({
      name: p.name,
      in: p.in,
      required: p.in === 'path' || p.required === true,
      description: str(p.description),
      schema,
      example,
      deprecated: p.deprecated === true,
    });
  }
  // Path parameters first, then required ones, keeping the spec's order otherwise.
  const rank = (p: ParamModel) => (p.in === 'path' ? 0 : p.required ? 1 : 2);
  return out.map((p, i) => ({ p, i })).sort((a, b) => rank(a.p) - rank(b.p) || a.i - b.i).map(({ p }) => p);
}

function firstExample(examples: unknown): unknown {
  if (!examples || typeof examples !== 'object') return undefined;
  for (const ex of Object.values<any>(examples)) {
    if (ex && typeof ex === 'object' && 'value' in ex) return ex.value;
  }
  return undefined;
}

/** Prefers JSON, then form encodings, then whatever comes first. */
function pickMedia(content: Record<string, any> | undefined): [string, any] | undefined {
  if (!content || typeof content !== 'object') return undefined;
  const entries = Object.entries(content);
  if (entries.length === 0) return undefined;
  const score = (t: string) =>
    t === 'application/json' ? 0 : /[/+]json\b/.test(t) ? 1 : t === 'multipart/form-data' ? 2 : t === 'application/x-www-form-urlencoded' ? 3 : 4;
  return [...entries].sort((a, b) => score(a[0]) - score(b[0]))[0];
}

function requestBody(op: any, item: any, version: SpecVersion, api: Record<string, any>): BodyModel | undefined {
  if (version === 'swagger-2.0') {
    const params: any[] = [...(Array.isArray(item.parameters) ? item.parameters : []), ...(Array.isArray(op.parameters) ? op.parameters : [])];
    const consumes: string[] = op.consumes ?? api.consumes ?? [];
    const body = params.find((p) => p?.in === 'body');
    if (body) {
      const mediaType = consumes.find((c) => /json/.test(c)) ?? consumes[0] ?? 'application/json';
      return { mediaType, required: body.required === true, description: str(body.description), schema: body.schema, example: body.schema?.example ?? body['x-example'] };
    }
    const form = params.filter((p) => p?.in === 'formData');
    if (form.length === 0) return undefined;
    const multipart = form.some((p) => p.type === 'file') || consumes.includes('multipart/form-data');
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    for (const p of form) {
      const { name, in: _in, required: req, description, ...rest } = p;
      properties[name] = { ...rest, ...(rest.type === 'file' ? { type: 'string', format: 'binary' } : {}), ...(description ? { description } : {}) };
      if (req) required.push(name);
    }
    return {
      mediaType: multipart ? 'multipart/form-data' : 'application/x-www-form-urlencoded',
      required: required.length > 0,
      description: '',
      schema: { type: 'object', properties, required },
      example: undefined,
    };
  }
  const rb = op.requestBody;
  if (!rb || typeof rb !== 'object') return undefined;
  const media = pickMedia(rb.content);
  if (!media) return undefined;
  const [mediaType, m] = media;
  return {
    mediaType,
    required: rb.required === true,
    description: str(rb.description),
    schema: m?.schema,
    example: m?.example ?? firstExample(m?.examples) ?? m?.schema?.example,
  };
}

function responses(raw: unknown, version: SpecVersion, api: Record<string, any>): ResponseModel[] {
  if (!raw || typeof raw !== 'object') return [];
  const out: ResponseModel[] = [];
  for (const [status, r] of Object.entries<any>(raw)) {
    if (status.startsWith('x-') || !r || typeof r !== 'object') continue;
    if (version === 'swagger-2.0') {
      const produces: string[] = api.produces ?? [];
      out.push({ status, description: str(r.description), mediaType: r.schema ? produces[0] ?? 'application/json' : '', schema: r.schema });
      continue;
    }
    const media = pickMedia(r.content);
    out.push({ status, description: str(r.description), mediaType: media?.[0] ?? '', schema: media?.[1]?.schema });
  }
  return out;
}

function curlSample(op: any): string | undefined {
  const samples = op['x-codeSamples'] ?? op['x-code-samples'];
  if (!Array.isArray(samples)) return undefined;
  for (const s of samples) {
    const lang = str(s?.lang).toLowerCase();
    const source = typeof s?.source === 'string' ? s.source.trim() : '';
    if (source && (lang === 'shell' || lang === 'bash' || lang === 'curl' || lang === 'sh') && /\bcurl\b/.test(source)) return source;
  }
  return undefined;
}
