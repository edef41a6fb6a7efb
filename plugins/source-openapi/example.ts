/**
 * Example values built from schemas, for the example requests: the spec's own example, default,
 * const or first enum value when it has one, else a plain value of the right type. Objects keep
 * their required properties (or a few when none is required); depth and cycles are bounded.
 */
import type { Schema } from './model.ts';
import { objectProperties } from './schema-print.ts';

const MAX_DEPTH = 5;
const OPTIONAL_WHEN_NONE_REQUIRED = 3;

/** An explicit value the schema gives (example, examples[0], default, const, enum[0]); undefined when none. */
export function explicitValue(s: unknown): unknown {
  if (!s || typeof s !== 'object') return undefined;
  const o = s as Schema;
  if (o.example !== undefined) return o.example;
  if (Array.isArray(o.examples) && o.examples.length > 0) return o.examples[0];
  if (o.default !== undefined) return o.default;
  if (o.const !== undefined) return o.const;
  if (Array.isArray(o.enum)) {
    const v = o.enum.find((x: unknown) => x !== null);
    if (v !== undefined) return v;
  }
  return undefined;
}

export function exampleFor(schema: unknown, depth = 0, stack: object[] = []): unknown {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return null;
  const s = schema as Schema;
  if (stack.includes(s) || depth > MAX_DEPTH) return undefined;
  const explicit = explicitValue(s);
  if (explicit !== undefined) return explicit;
  const next = [...stack, s];
  const variants = (Array.isArray(s.oneOf) && s.oneOf) || (Array.isArray(s.anyOf) && s.anyOf) || null;
  if (variants) {
    const usable = variants.filter((v: unknown) => v && typeof v === 'object' && !isNullOnly(v as Schema));
    const preferred = usable.find((v: unknown) => explicitValue(v) !== undefined) ?? usable[0];
    return preferred ? exampleFor(preferred, depth, next) : null;
  }
  const object = objectProperties(s);
  const type = Array.isArray(s.type) ? s.type.find((t: unknown) => t !== 'null') : s.type;
  if (object || type === 'object') {
    if (!object) return {};
    const required = object.properties.filter(([k]) => object.required.has(k));
    const chosen = required.length > 0 ? required : object.properties.filter(([, v]) => explicitValue(v) !== undefined).slice(0, OPTIONAL_WHEN_NONE_REQUIRED);
    const picked = chosen.length > 0 ? chosen : object.properties.slice(0, OPTIONAL_WHEN_NONE_REQUIRED);
    const out: Record<string, unknown> = {};
    for (const [k, v] of picked) {
      if (v.readOnly === true) continue;
      const value = exampleFor(v, depth + 1, next);
      if (value !== undefined) out[k] = value;
    }
    return out;
  }
  if (type === 'array' || s.items) {
    const item = exampleFor(s.items, depth + 1, next);
    return item === undefined ? [] : [item];
  }
  switch (type) {
    case 'string':
      return stringExample(s.format);
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? s.minimum : 0;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'file':
      return '@file';
    default:
      return Array.isArray(s.allOf) ? exampleFor(s.allOf[0], depth, next) : null;
  }
}

function isNullOnly(s: Schema): boolean {
  return s.type === 'null' || (Array.isArray(s.type) && s.type.length === 1 && s.type[0] === 'null');
}

function stringExample(format: unknown): string {
  switch (format) {
    case 'date-time':
      return '2024-01-01T00:00:00Z';
    case 'date':
      return '2024-01-01';
    case 'email':
      return 'user@example.com';
    case 'uri':
    case 'url':
      return 'https://example.com';
    case 'uuid':
      return '3fa85f64-5717-4562-b3fc-2c963f66afa6';
    case 'binary':
      return '@file';
    default:
      return 'string';
  }
}
