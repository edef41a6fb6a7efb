/**
 * A runnable curl command for one operation: method, full URL (path parameters filled with
 * examples or `<name>` placeholders, required query parameters), auth header from the security
 * scheme (credentials read from environment variables, never literal), and a body built from
 * the spec's examples or the schema.
 */
import type { OperationModel, ParamModel, SecuritySchemeModel } from './model.ts';
import { exampleFor, explicitValue } from './example.ts';
import { objectProperties } from './schema-print.ts';

/** Single-quotes a word for a POSIX shell. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function paramValue(p: ParamModel): string | undefined {
  const v = p.example ?? explicitValue(p.schema);
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return v.map(String).join(',');
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** Environment variable names for credentials: `API_TOKEN`, `API_KEY`, `API_USER`/`API_PASSWORD`. */
function authArgs(schemes: SecuritySchemeModel[], query: string[]): string[] {
  const args: string[] = [];
  for (const s of schemes) {
    if (s.type === 'http' && s.scheme === 'basic') args.push('-u "$API_USER:$API_PASSWORD"');
    else if (s.type === 'http' && s.scheme && s.scheme !== 'bearer') args.push(`-H "Authorization: ${s.scheme[0].toUpperCase()}${s.scheme.slice(1)} $API_TOKEN"`);
    else if (s.type === 'http' || s.type === 'oauth2' || s.type === 'openIdConnect') args.push('-H "Authorization: Bearer $API_TOKEN"');
    else if (s.type === 'apiKey' && s.paramName) {
      if (s.in === 'query') query.push(`${encodeURIComponent(s.paramName)}=$API_KEY`);
      else if (s.in === 'cookie') args.push(`-b "${s.paramName}=$API_KEY"`);
      else args.push(`-H "${s.paramName}: $API_KEY"`);
    }
  }
  return args;
}

export function buildCurl(op: OperationModel): string {
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const p = op.params.find((x) => x.in === 'path' && x.name === name);
    const v = p ? paramValue(p) : undefined;
    return v !== undefined ? encodeURIComponent(v) : `<${name}>`;
  });
  const query: string[] = [];
  for (const p of op.params) {
    if (p.in !== 'query' || !p.required) continue;
    const v = paramValue(p);
    query.push(`${encodeURIComponent(p.name)}=${v !== undefined ? encodeURIComponent(v) : `<${p.name}>`}`);
  }
  const auth = authArgs(op.auth, query);
  const url = op.baseUrl.replace(/\/+$/, '') + path + (query.length > 0 ? `?${query.join('&')}` : '');
  // Double quotes when the URL reads an environment variable, single quotes otherwise.
  const quotedUrl = url.includes('$API_KEY') ? `"${url.replace(/(["\\`])/g, '\\$1')}"` : shellQuote(url);
  const lines = [`curl -X ${op.method} ${quotedUrl}`, ...auth];
  for (const p of op.params) {
    if (p.in !== 'header' || !p.required) continue;
    if (/^(authorization|content-type|accept)$/i.test(p.name)) continue;
    lines.push(`-H ${shellQuote(`${p.name}: ${paramValue(p) ?? `<${p.name}>`}`)}`);
  }
  const body = op.body;
  if (body) lines.push(...bodyArgs(body.mediaType, body.example !== undefined ? body.example : exampleFor(body.schema), body.schema));
  return lines.join(' \\\n  ');
}

function bodyArgs(mediaType: string, value: unknown, schema: unknown): string[] {
  if (mediaType === 'multipart/form-data' || mediaType === 'application/x-www-form-urlencoded') {
    const flag = mediaType === 'multipart/form-data' ? '-F' : '--data-urlencode';
    const fields = value && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value as Record<string, unknown>) : [];
    const props = objectProperties(schema);
    const out: string[] = [];
    for (const [k, v] of fields) {
      const prop = props?.properties.find(([name]) => name === k)?.[1];
      const isFile = prop?.format === 'binary' || prop?.type === 'file' || v === '@file';
      if (isFile && flag === '-F') out.push(`-F ${shellQuote(`${k}=@${k}.bin`)}`);
      else out.push(`${flag} ${shellQuote(`${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)}`);
    }
    return out;
  }
  if (/json/.test(mediaType) || mediaType === '') {
    return [`-H 'Content-Type: ${mediaType || 'application/json'}'`, `-d ${shellQuote(compactJson(value ?? {}))}`];
  }
  if (/^text\//.test(mediaType)) return [`-H 'Content-Type: ${mediaType}'`, `-d ${shellQuote(typeof value === 'string' ? value : 'text')}`];
  return [`-H 'Content-Type: ${mediaType}'`, `--data-binary '@body.bin'`];
}

/** One line when short, indented otherwise. */
function compactJson(value: unknown): string {
  const flat = JSON.stringify(value);
  return flat.length <= 80 ? flat : JSON.stringify(value, null, 2);
}
