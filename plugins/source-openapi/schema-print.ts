/**
 * Compact, TypeScript-like notation for JSON schemas: `{ id: integer; name?: string;
 * status: 'available' | 'pending' | … (+1) }`. Named component schemas print as their name below
 * the top, depth and property counts are capped, and a schema met again inside itself prints as
 * `<circular: Name>`, so any schema prints in bounded time and length.
 */
import type { Schema } from './model.ts';

export interface PrintOptions {
  /** Component schema objects by identity, to print their names. */
  names: Map<object, string>;
  /** Object nesting levels expanded; deeper objects print as their name or `{…}`. */
  maxDepth: number;
  /** Properties shown per object before `…(+N)`. */
  maxProps: number;
  /** Enum values shown before `… (+N)`. */
  maxEnum: number;
}

export const DEFAULT_PRINT: Omit<PrintOptions, 'names'> = { maxDepth: 2, maxProps: 25, maxEnum: 6 };

const MAX_UNION = 6;

/**
 * Prints a schema. `within` lists the schemas it is printed inside (e.g. the request body whose
 * fields are listed one by one), so a field that refers back to one of them shows as circular.
 */
export function printSchema(schema: unknown, options: PrintOptions, depth = 0, within: object[] = []): string {
  return print(schema, options, depth, within);
}

function isSchema(v: unknown): v is Schema {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

function literal(v: unknown): string {
  if (typeof v === 'string') return `'${v.length > 40 ? v.slice(0, 40) + '…' : v}'`;
  const s = JSON.stringify(v);
  return s === undefined ? 'unknown' : s.length > 40 ? s.slice(0, 40) + '…' : s;
}

function wrap(t: string): string {
  return / [|&] /.test(t) && !/^[{(]/.test(t) ? `(${t})` : t;
}

function types(s: Schema): string[] {
  if (Array.isArray(s.type)) return s.type.filter((t: unknown): t is string => typeof t === 'string');
  return typeof s.type === 'string' ? [s.type] : [];
}

function isNullable(s: Schema): boolean {
  return s.nullable === true || types(s).includes('null');
}

function print(s: unknown, o: PrintOptions, depth: number, stack: object[]): string {
  if (s === true || s === undefined) return 'any';
  if (s === false) return 'never';
  if (!isSchema(s)) return 'any';
  const name = o.names.get(s);
  if (stack.includes(s)) return `<circular: ${name ?? 'schema'}>`;
  if (name && depth > 0) return name + (isNullable(s) ? ' | null' : '');
  const inner = printInner(s, o, depth, [...stack, s]);
  const body = isNullable(s) && !/\bnull$/.test(inner) ? `${inner} | null` : inner;
  return depth === 0 && name && body.startsWith('{') ? `${name} ${body}` : body;
}

function union(parts: unknown[], o: PrintOptions, depth: number, stack: object[], sep: ' | ' | ' & '): string {
  const printed: string[] = [];
  for (const p of parts) {
    const t = print(p, o, depth, stack);
    if (!printed.includes(t)) printed.push(t);
  }
  const shown = printed.slice(0, MAX_UNION).map(wrap);
  if (printed.length > MAX_UNION) shown.push(`… (+${printed.length - MAX_UNION})`);
  return shown.join(sep) || 'any';
}

function printInner(s: Schema, o: PrintOptions, depth: number, stack: object[]): string {
  if (s.const !== undefined) return literal(s.const);
  if (Array.isArray(s.enum) && s.enum.length > 0) {
    const values = s.enum.filter((v: unknown) => v !== null).map(literal);
    const shown = values.slice(0, o.maxEnum);
    if (values.length > o.maxEnum) shown.push(`… (+${values.length - o.maxEnum})`);
    return shown.join(' | ') || 'null';
  }
  if (Array.isArray(s.oneOf) && s.oneOf.length > 0) return union(s.oneOf, o, depth, stack, ' | ');
  if (Array.isArray(s.anyOf) && s.anyOf.length > 0) return union(s.anyOf, o, depth, stack, ' | ');
  if (Array.isArray(s.allOf) && s.allOf.length > 0) {
    const merged = mergeAllOf(s, stack);
    if (merged) return printObject(merged, o, depth, stack);
    return union(s.allOf, o, depth, stack, ' & ');
  }
  const ts = types(s).filter((t) => t !== 'null');
  if (ts.length > 1) return ts.map((t) => printInner({ ...s, type: t, nullable: false }, o, depth, stack)).join(' | ');
  const t = ts[0] ?? (s.properties || s.additionalProperties ? 'object' : s.items ? 'array' : '');
  switch (t) {
    case 'object':
      return printObject(s, o, depth, stack);
    case 'array': {
      if (Array.isArray(s.prefixItems)) return `[${s.prefixItems.map((x: unknown) => print(x, o, depth, stack)).join(', ')}]`;
      return `${wrap(print(s.items, o, depth, stack))}[]`;
    }
    case 'string':
    case 'integer':
    case 'number':
      return s.format ? `${t}<${s.format}>` : t;
    case 'boolean':
      return 'boolean';
    case 'file':
      return 'binary';
    case '':
      return types(s).includes('null') ? 'null' : 'any';
    default:
      return t;
  }
}

/** allOf of objects only: one object with every part's properties (nested allOf included). */
function mergeAllOf(s: Schema, stack: object[]): Schema | null {
  const properties: Record<string, unknown> = {};
  const required = new Set<string>();
  let additional: unknown;
  const visit = (part: unknown, seen: object[]): boolean => {
    if (!isSchema(part) || seen.includes(part)) return false;
    const next = [...seen, part];
    if (Array.isArray(part.allOf) && !part.allOf.every((p: unknown) => visit(p, next))) return false;
    const ts = types(part);
    if (ts.length > 0 && !ts.includes('object')) return false;
    if (part.oneOf || part.anyOf || part.enum) return false;
    Object.assign(properties, part.properties ?? {});
    for (const r of Array.isArray(part.required) ? part.required : []) required.add(r);
    if (part.additionalProperties !== undefined) additional = part.additionalProperties;
    return true;
  };
  if (!visit(s, stack.slice(0, -1))) return null;
  return { type: 'object', properties, required: [...required], ...(additional !== undefined ? { additionalProperties: additional } : {}) };
}

function printObject(s: Schema, o: PrintOptions, depth: number, stack: object[]): string {
  const props = isSchema(s.properties) ? Object.entries(s.properties) : [];
  const extra = s.additionalProperties;
  if (props.length === 0) {
    if (isSchema(extra) || extra === true) return `Record<string, ${print(extra, o, depth + 1, stack)}>`;
    return 'object';
  }
  if (depth >= o.maxDepth) return '{…}';
  const required = new Set(Array.isArray(s.required) ? s.required : []);
  const shown = props.slice(0, o.maxProps).map(([k, v]) => {
    const key = /^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k);
    return `${key}${required.has(k) ? '' : '?'}: ${print(v, o, depth + 1, stack)}`;
  });
  if (props.length > o.maxProps) shown.push(`… (+${props.length - o.maxProps})`);
  if (isSchema(extra)) shown.push(`[key: string]: ${print(extra, o, depth + 1, stack)}`);
  return `{ ${shown.join('; ')} }`;
}

/** The properties of an object schema (allOf merged), or null when it is not an object with properties. */
export function objectProperties(schema: unknown): { properties: Array<[string, Schema]>; required: Set<string> } | null {
  if (!isSchema(schema)) return null;
  const merged = Array.isArray(schema.allOf) ? mergeAllOf(schema, []) : schema;
  if (!merged || !isSchema(merged.properties)) return null;
  const props = Object.entries(merged.properties).filter((e): e is [string, Schema] => isSchema(e[1]));
  if (props.length === 0) return null;
  return { properties: props, required: new Set(Array.isArray(merged.required) ? merged.required : []) };
}
