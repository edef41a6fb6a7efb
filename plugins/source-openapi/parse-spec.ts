import { LineCounter, parseDocument } from 'yaml';
import { parse as parseYaml } from 'yaml';
import { RefdeskError } from '../../core/errors.ts';

/** The spec dialects Refdesk reads. */
export type SpecVersion = 'swagger-2.0' | 'openapi-3.0' | 'openapi-3.1';

export interface ParsedSpec {
  version: SpecVersion;
  /** The dereferenced document: internal $refs replaced by their targets (cycles stay cycles). */
  api: Record<string, any>;
  /** Component (or definition) schema objects by identity, to print their names. */
  schemaNames: Map<object, string>;
}

/** Parses JSON or YAML text into a plain object; a syntax error names the line. */
export function parseText(text: string, location: string): Record<string, unknown> {
  const body = text.replace(/^\uFEFF/, '');
  let data: unknown;
  if (/^\s*[{[]/.test(body)) {
    try {
      data = JSON.parse(body);
    } catch (e) {
      const m = /position (\d+)/.exec((e as Error).message);
      const end = /end of JSON input/.test((e as Error).message);
      const line = m ? body.slice(0, Number(m[1])).split('\n').length : end ? body.trimEnd().split('\n').length : undefined;
      throw new RefdeskError(
        'invalid_source',
        `The OpenAPI spec ${location} is not valid JSON${line ? ` (line ${line})` : ''}: ${(e as Error).message.split('\n')[0]}.`,
      );
    }
  } else {
    try {
      data = parseYaml(body, { prettyErrors: true });
    } catch (e) {
      const line = (e as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
      const first = String((e as Error).message).split('\n')[0];
      throw new RefdeskError('invalid_source', `The OpenAPI spec ${location} is neither valid JSON nor valid YAML${line ? ` (line ${line})` : ''}: ${first}`);
    }
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new RefdeskError('invalid_source', `The document at ${location} is not an OpenAPI spec: its top level is not an object.`);
  }
  return data as Record<string, unknown>;
}

/** Which dialect the document declares; refuses anything else with what is supported. */
export function detectVersion(doc: Record<string, unknown>, location: string): SpecVersion {
  const { swagger, openapi } = doc;
  if (swagger !== undefined) {
    if (String(swagger) === '2.0' || String(swagger) === '2') return 'swagger-2.0';
    throw new RefdeskError('invalid_source', `The spec ${location} declares swagger "${String(swagger).slice(0, 20)}"; Refdesk reads Swagger 2.0 and OpenAPI 3.0/3.1 (convert older specs to 2.0 or newer).`);
  }
  if (openapi !== undefined) {
    const v = String(openapi);
    if (/^3\.0(\.\d+)?$/.test(v)) return 'openapi-3.0';
    if (/^3\.1(\.\d+)?$/.test(v)) return 'openapi-3.1';
    throw new RefdeskError('invalid_source', `The spec ${location} declares openapi "${v.slice(0, 20)}"; Refdesk reads Swagger 2.0 and OpenAPI 3.0/3.1.`);
  }
  throw new RefdeskError('invalid_source', `The document at ${location} is not an OpenAPI spec: it has neither an "openapi" nor a "swagger" field at the top level.`);
}

/** JSON pointer of a path of keys (RFC 6901). */
export function pointer(keys: ReadonlyArray<string | number>): string {
  return '/' + keys.map((k) => String(k).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

/**
 * External references are refused: the spec must be one self-contained document. Following them
 * would mean fetching or reading further files the user never named (and swagger-parser would do
 * it with its own HTTP client, around the operator's network policy). Returns the first one found.
 */
export function findExternalRef(doc: unknown): { ref: string; at: string } | null {
  const stack: Array<{ v: unknown; keys: Array<string | number> }> = [{ v: doc, keys: [] }];
  while (stack.length > 0) {
    const { v, keys } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], keys: [...keys, i] });
      continue;
    }
    const o = v as Record<string, unknown>;
    if (typeof o.$ref === 'string' && !o.$ref.startsWith('#')) return { ref: o.$ref, at: pointer(keys) };
    const entries = Object.entries(o);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, child] = entries[i];
      // Examples are data, not schema: a "$ref" key in an example is just a value.
      if (k === 'example' || k === 'examples' || k === 'x-examples') continue;
      stack.push({ v: child, keys: [...keys, k] });
    }
  }
  return null;
}

/**
 * Validates the document with swagger-parser (the Swagger 2.0 / OpenAPI 3.0 / 3.1 JSON schema and
 * the spec rules) and dereferences its internal $refs in place. Circular schemas keep their cycles
 * as object cycles; printers stop at them. Every failure is an `invalid_source` that says where.
 */
export async function validateSpec(doc: Record<string, unknown>, text: string, location: string): Promise<ParsedSpec> {
  const version = detectVersion(doc, location);
  const external = findExternalRef(doc);
  if (external) {
    throw new RefdeskError(
      'invalid_source',
      `The spec ${location} has an external $ref "${external.ref.slice(0, 120)}" at ${external.at}${lineHint(text, external.at)}. Refdesk reads one self-contained document: bundle the spec first (e.g. "redocly bundle" or "swagger-cli bundle") and give the bundled file.`,
    );
  }
  const names = collectSchemaRoots(doc);
  let api: Record<string, any>;
  try {
    // Imported here, at the first spec validated, rather than when the server starts.
    const { default: SwaggerParser } = await import('@apidevtools/swagger-parser');
    api = (await SwaggerParser.validate(doc as never, {
      resolve: { external: false, file: false, http: false },
      dereference: { circular: true },
    } as never)) as unknown as Record<string, any>;
  } catch (e) {
    throw validationError(e, text, location);
  }
  const schemaNames = new Map<object, string>();
  for (const [name, obj] of names) if (obj && typeof obj === 'object' && !schemaNames.has(obj)) schemaNames.set(obj, name);
  return { version, api, schemaNames };
}

/** The named schemas (components.schemas or definitions) before dereferencing: deref keeps their identity. */
function collectSchemaRoots(doc: Record<string, any>): Array<[string, object]> {
  const out: Array<[string, object]> = [];
  const groups = [doc.components?.schemas, doc.definitions];
  for (const g of groups) {
    if (!g || typeof g !== 'object') continue;
    for (const [name, s] of Object.entries(g)) if (s && typeof s === 'object') out.push([name, s as object]);
  }
  return out;
}

interface AjvLikeError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

const NOISE = new Set(['oneOf', 'anyOf', 'if', 'then', 'else', 'not', '$ref', 'unevaluatedProperties', 'dependentSchemas']);

/** Turns a swagger-parser failure into an `invalid_source` naming the JSON pointer (and line). */
export function validationError(e: unknown, text: string, location: string): RefdeskError {
  const err = e as Error & { details?: AjvLikeError[]; path?: string; code?: string; source?: string };
  if (Array.isArray(err.details) && err.details.length > 0) {
    const problems = summarizeAjv(err.details);
    const locate = locator(text);
    const shown = problems.slice(0, 3).map((p) => `at ${p.at}${locate(p.at)}: ${p.what}`);
    const more = problems.length > shown.length ? ` (and ${problems.length - shown.length} more)` : '';
    return new RefdeskError('invalid_source', `The spec ${location} is not a valid OpenAPI document: ${shown.join('; ')}${more}. Fix the spec and add it again.`);
  }
  const name = err?.name ?? '';
  if (name === 'MissingPointerError' || /Missing \$ref pointer|Error resolving \$ref pointer/.test(err?.message ?? '')) {
    const m = /"(#[^"]*)"/.exec(err.message);
    return new RefdeskError('invalid_source', `The spec ${location} has a $ref to ${m ? `"${m[1]}"` : 'a location'} that does not exist: fix the reference.`);
  }
  const msg = String(err?.message ?? e).split('\n')[0].replace(/^Validation failed\.\s*/, '');
  return new RefdeskError('invalid_source', `The spec ${location} is not a valid OpenAPI document: ${msg.slice(0, 400)}. Fix the spec and add it again.`);
}

/**
 * The schema errors a person should read, one line per place: errors of the alternatives of a
 * oneOf/anyOf (a parameter is either a $ref or has a schema or content...) are dropped when the
 * same place has other errors, and the allowed values or missing properties at one place are
 * merged into one line.
 */
function summarizeAjv(details: AjvLikeError[]): Array<{ at: string; what: string }> {
  const composite = new Set(details.filter((d) => d.keyword === 'oneOf' || d.keyword === 'anyOf').map((d) => d.instancePath ?? ''));
  const useful = details.filter((d) => !NOISE.has(d.keyword ?? '') && !(composite.has(d.instancePath ?? '') && (d.keyword === 'required' || d.keyword === 'additionalProperties' || d.keyword === 'type')));
  const chosen = useful.length > 0 ? useful : details;
  const groups = new Map<string, { at: string; enums: unknown[]; missing: string[]; unknown: string[]; other: string[] }>();
  for (const d of chosen) {
    const at = d.instancePath || '/';
    let g = groups.get(at);
    if (!g) groups.set(at, (g = { at, enums: [], missing: [], unknown: [], other: [] }));
    const p = d.params ?? {};
    if (d.keyword === 'enum' && Array.isArray(p.allowedValues)) {
      for (const v of p.allowedValues) if (!g.enums.includes(v)) g.enums.push(v);
    } else if (d.keyword === 'required' && p.missingProperty) {
      if (!g.missing.includes(String(p.missingProperty))) g.missing.push(String(p.missingProperty));
    } else if (d.keyword === 'additionalProperties' && p.additionalProperty) {
      if (!g.unknown.includes(String(p.additionalProperty))) g.unknown.push(String(p.additionalProperty));
    } else {
      const what = describeAjv(d);
      if (!g.other.includes(what)) g.other.push(what);
    }
  }
  return [...groups.values()].map((g) => {
    const parts: string[] = [];
    if (g.missing.length > 0) parts.push(`missing required propert${g.missing.length > 1 ? 'ies' : 'y'} ${g.missing.map((m) => `"${m}"`).join(', ')}`);
    if (g.unknown.length > 0) parts.push(`unknown propert${g.unknown.length > 1 ? 'ies' : 'y'} ${g.unknown.map((m) => `"${m}"`).join(', ')}`);
    if (g.enums.length > 0) parts.push(`must be one of ${g.enums.slice(0, 10).map((x) => JSON.stringify(x)).join(', ')}`);
    parts.push(...g.other);
    return { at: g.at, what: parts.join('; ') };
  });
}

function describeAjv(d: AjvLikeError): string {
  const p = d.params ?? {};
  if (d.keyword === 'required' && p.missingProperty) return `missing required property "${String(p.missingProperty)}"`;
  if (d.keyword === 'additionalProperties' && p.additionalProperty) return `unknown property "${String(p.additionalProperty)}"`;
  if (d.keyword === 'enum' && Array.isArray(p.allowedValues)) return `must be one of ${p.allowedValues.slice(0, 8).map((x) => JSON.stringify(x)).join(', ')}`;
  if (d.keyword === 'type' && p.type) return `must be ${String(p.type)}`;
  return d.message ?? d.keyword ?? 'invalid';
}

/** " (line N)" for a JSON pointer, when the text can be located (YAML or JSON); '' otherwise. */
export function lineHint(text: string, at: string): string {
  return locator(text)(at);
}

/** Parses the text once (with positions) for all the pointers of one error message. */
function locator(text: string): (at: string) => string {
  let doc: ReturnType<typeof parseDocument> | null = null;
  const counter = new LineCounter();
  try {
    doc = parseDocument(text, { lineCounter: counter });
  } catch {
    doc = null;
  }
  const locate = (at: string): string => {
    if (!doc) return '';
    try {
      const keys = at === '/' || at === '' ? [] : at.slice(1).split('/').map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
      for (let depth = keys.length; depth >= 0; depth--) {
        const path = keys.slice(0, depth).map((k) => (/^\d+$/.test(k) ? Number(k) : k));
        const n = (path.length === 0 ? doc.contents : doc.getIn(path, true)) as { range?: [number, number, number] } | undefined;
        if (n?.range) return ` (line ${counter.linePos(n.range[0]).line})`;
      }
    } catch {
      // no position: the message still has the pointer
    }
    return '';
  };
  return locate;
}
