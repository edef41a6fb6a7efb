/**
 * Renders the API model as markdown documents: `index.md` (overview and authentication) and one
 * `tags/<tag>.md` per tag, where every operation is one `##` section whose prose (summary,
 * parameters, body, responses in compact form) is followed by exactly one code block, the
 * example request. The `openapi` chunker (and, degraded, any markdown chunker) turns each such
 * section into one code snippet.
 */
import type { ApiModel, BodyModel, OperationModel, ParamModel, ResponseModel, SecuritySchemeModel, TagModel } from './model.ts';
import { buildCurl } from './curl.ts';
import { code, embedMarkdown, inlineText } from './markdown-text.ts';
import { DEFAULT_PRINT, objectProperties, printSchema, type PrintOptions } from './schema-print.ts';

export interface RenderedDocument {
  path: string;
  title: string;
  content: string;
}

const VERSION_LABEL = { 'swagger-2.0': 'Swagger 2.0', 'openapi-3.0': 'OpenAPI 3.0', 'openapi-3.1': 'OpenAPI 3.1' } as const;
const MAX_BODY_FIELDS = 40;

/** `Chat Completions` -> `chat-completions`, unique within the set given. */
function slugFor(name: string, used: Set<string>): string {
  const base =
    name
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'tag';
  let slug = base;
  for (let i = 2; used.has(slug); i++) slug = `${base}-${i}`;
  used.add(slug);
  return slug;
}

/** `POST /v1/chat/completions — Create chat completion` */
export function operationTitle(op: OperationModel): string {
  const name = inlineText(op.name, 120);
  return `${op.method} ${op.displayPath}${name ? ` — ${name}` : ''}`;
}

export function renderApi(model: ApiModel, names: Map<object, string>, source: string): RenderedDocument[] {
  const used = new Set<string>(['index']);
  const tagDocs = model.tags.map((tag) => ({ tag, path: `tags/${slugFor(tag.name, used)}.md` }));
  const docs: RenderedDocument[] = [{ path: 'index.md', title: model.title, content: renderIndex(model, tagDocs, source) }];
  const print = { ...DEFAULT_PRINT, names };
  for (const { tag, path } of tagDocs) {
    docs.push({ path, title: `${model.title}: ${tag.name}`, content: renderTag(model, tag, print) });
  }
  return docs;
}

function renderIndex(model: ApiModel, tagDocs: Array<{ tag: TagModel; path: string }>, source: string): string {
  const out: string[] = [`# ${inlineText(model.title, 200)}`, ''];
  out.push(`${inlineText(model.title, 200)}${model.apiVersion ? ` version ${inlineText(model.apiVersion, 40)}` : ''}, an ${VERSION_LABEL[model.version]} API with ${model.operationCount} operations (from ${source}).`, '');
  if (model.description) out.push(embedMarkdown(model.description), '');
  if (model.servers.length > 0) {
    out.push('Servers:');
    for (const s of model.servers) out.push(`- ${code(s.url)}${s.description ? `: ${inlineText(s.description)}` : ''}`);
    out.push('');
  }
  out.push('Operations by tag:');
  for (const { tag, path } of tagDocs) {
    out.push(`- ${inlineText(tag.name, 100)} (${tag.operations.length} operation${tag.operations.length === 1 ? '' : 's'}, ${path})${tag.description ? `: ${inlineText(tag.description, 160)}` : ''}`);
  }
  out.push('', '## Authentication', '');
  if (model.schemes.length === 0) {
    out.push('The spec declares no authentication scheme: requests are sent without credentials.');
  } else {
    out.push('Authentication schemes of this API:');
    for (const s of model.schemes) out.push(`- ${code(s.name)}: ${describeScheme(s)}`);
    out.push('');
    out.push(
      model.defaultAuth.length > 0
        ? `Every operation uses ${model.defaultAuth.map(code).join(' and ')} unless it says otherwise.`
        : 'No scheme is required by default; each operation says which one it needs.',
    );
  }
  return out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd() + '\n';
}

/** How a scheme is used on the wire, e.g. "HTTP bearer token: `Authorization: Bearer <token>`". */
export function describeScheme(s: SecuritySchemeModel): string {
  let how: string;
  if (s.type === 'http' && s.scheme === 'basic') how = 'HTTP basic authentication: `Authorization: Basic <base64 user:password>`';
  else if (s.type === 'http' && s.scheme === 'bearer') how = `HTTP bearer token${s.bearerFormat ? ` (${inlineText(s.bearerFormat, 40)})` : ''}: \`Authorization: Bearer <token>\``;
  else if (s.type === 'http') how = `HTTP ${inlineText(s.scheme ?? '', 40)} authentication in the \`Authorization\` header`;
  else if (s.type === 'apiKey') how = `API key in the ${inlineText(s.in ?? 'header', 20)} ${code(s.paramName ?? '')}`;
  else if (s.type === 'oauth2') how = `OAuth 2.0${s.flows.length > 0 ? ` (${s.flows.map((f) => inlineText(f, 200)).join('; ')})` : ''}, access token sent as \`Authorization: Bearer <token>\``;
  else if (s.type === 'openIdConnect') how = `OpenID Connect${s.flows.length > 0 ? ` (${inlineText(s.flows[0], 200)})` : ''}, token sent as \`Authorization: Bearer <token>\``;
  else if (s.type === 'mutualTLS') how = 'mutual TLS (a client certificate)';
  else how = inlineText(s.type, 40) || 'unknown scheme';
  return s.description ? `${how}. ${inlineText(s.description, 300)}` : how;
}

function renderTag(model: ApiModel, tag: TagModel, print: PrintOptions): string {
  const out: string[] = [`# ${inlineText(model.title, 120)}: ${inlineText(tag.name, 100)}`, ''];
  if (tag.description) out.push(embedMarkdown(tag.description), '');
  out.push(`Operations (${tag.operations.length}):`);
  for (const op of tag.operations) out.push(`- ${code(`${op.method} ${op.displayPath}`)}${op.name ? `: ${inlineText(op.name, 120)}` : ''}${op.deprecated ? ' (deprecated)' : ''}`);
  out.push('');
  for (const op of tag.operations) out.push(...renderOperation(op, print), '');
  return out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd() + '\n';
}

function renderOperation(op: OperationModel, print: PrintOptions): string[] {
  const out: string[] = [`## ${operationTitle(op)}`, ''];
  if (op.deprecated) out.push('Deprecated.', '');
  if (op.text) out.push(embedMarkdown(op.text), '');
  if (op.params.length > 0) {
    out.push('Parameters:');
    for (const p of op.params) out.push(renderParam(p, print));
    out.push('');
  }
  if (op.body) out.push(...renderBody(op.body, print), '');
  if (op.responses.length > 0) {
    out.push('Responses:');
    for (const r of op.responses) out.push(renderResponse(r, print));
    out.push('');
  }
  out.push(renderAuth(op), '');
  const curl = op.curlSample ?? buildCurl(op);
  const fence = '`'.repeat(Math.max(3, ...(curl.match(/`+/g) ?? []).map((m) => m.length + 1)));
  out.push(`${fence}bash`, curl, fence);
  return out;
}

function renderParam(p: ParamModel, print: PrintOptions): string {
  const facts = [p.in, printSchema(p.schema, { ...print, maxDepth: 1 }, 1), p.required ? 'required' : 'optional'];
  const def = p.schema?.default;
  if (def !== undefined && typeof def !== 'object') facts.push(`default ${JSON.stringify(def)}`);
  if (p.deprecated) facts.push('deprecated');
  return `- ${code(p.name)} (${facts.join(', ')})${p.description ? `: ${inlineText(p.description)}` : ''}`;
}

function renderBody(body: BodyModel, print: PrintOptions): string[] {
  const schema = body.schema;
  const name = schema ? print.names.get(schema) : undefined;
  const head = `Request body (${code(body.mediaType)}, ${body.required ? 'required' : 'optional'})`;
  const object = objectProperties(schema);
  const out: string[] = [];
  if (object) {
    out.push(`${head}${name ? `: ${code(name)}` : ''}${body.description ? `. ${inlineText(body.description)}` : ''}`);
    for (const [k, v] of object.properties.slice(0, MAX_BODY_FIELDS)) {
      if (v.readOnly === true) continue;
      const type = printSchema(v, { ...print, maxDepth: 2 }, 1, schema ? [schema] : []);
      const desc = typeof v.description === 'string' ? inlineText(v.description, 200) : '';
      out.push(`- ${code(k)} (${code(type)}, ${object.required.has(k) ? 'required' : 'optional'})${desc ? `: ${desc}` : ''}`);
    }
    if (object.properties.length > MAX_BODY_FIELDS) out.push(`- … and ${object.properties.length - MAX_BODY_FIELDS} more fields`);
  } else {
    out.push(`${head}: ${code(printSchema(schema, print, 0))}${body.description ? `. ${inlineText(body.description)}` : ''}`);
  }
  return out;
}

function renderResponse(r: ResponseModel, print: PrintOptions): string {
  const desc = r.description ? ` ${inlineText(r.description, 160)}` : '';
  if (!r.schema) return `- ${code(r.status)}${desc}`;
  const type = printSchema(r.schema, { ...print, maxDepth: 1, maxProps: 20 }, 0);
  return `- ${code(r.status)}${desc} (${code(r.mediaType)}): ${code(type)}`;
}

/** A few words on how credentials are sent, for an operation's auth line. */
function shortScheme(s: SecuritySchemeModel): string {
  if (s.type === 'http' && s.scheme === 'basic') return 'HTTP basic';
  if (s.type === 'http' && s.scheme === 'bearer') return 'bearer token';
  if (s.type === 'http') return `HTTP ${inlineText(s.scheme ?? '', 40)}`;
  if (s.type === 'apiKey') return `API key in ${inlineText(s.in ?? 'header', 20)} ${code(s.paramName ?? '')}`;
  if (s.type === 'oauth2') return 'OAuth 2.0 bearer token';
  if (s.type === 'openIdConnect') return 'OpenID Connect bearer token';
  return inlineText(s.type, 40);
}

function renderAuth(op: OperationModel): string {
  if (op.auth.length === 0) return op.authOptional ? 'Authentication: none needed.' : 'Authentication: none.';
  const how = op.auth.map((s) => `${code(s.name)} (${shortScheme(s)})`).join(' and ');
  return `Authentication: ${how}${op.authOptional ? ', optional' : ''}.`;
}
