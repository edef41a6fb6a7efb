import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';
import type { JsonSchema } from './define.ts';
import { precompiledValidators } from './precompiled-validators.ts';

/** The options of the one ajv instance (and of the validators precompiled at build time): all errors, defaults applied, no coercion. */
export const AJV_OPTIONS: Options = { allErrors: true, useDefaults: true, strict: false };

let instance: Ajv | undefined;
/** The ajv instance, made at the first schema that was not precompiled (ajv and its compile cost stay off the start). */
function ajv(): Ajv {
  if (!instance) {
    const { Ajv: AjvClass } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
    instance = new AjvClass(AJV_OPTIONS);
  }
  return instance;
}

const cache = new WeakMap<object, ValidateFunction>();

export function compile(schema: JsonSchema): ValidateFunction {
  const cached = cache.get(schema);
  if (cached) return cached;
  const v = (precompiledValidators.size > 0 ? precompiledValidators.get(JSON.stringify(schema)) : undefined) ?? ajv().compile(schema);
  cache.set(schema, v);
  return v;
}

/**
 * Validates `data` in place (defaults applied) and returns readable problems, each prefixed with
 * `path`. Messages name properties and constraints, never the values given (they may be secrets).
 */
export function validate(schema: JsonSchema, data: unknown, path: string): string[] {
  const v = compile(schema);
  if (v(data)) return [];
  return (v.errors ?? []).map((e) => {
    const where = `${path}${jsonPointerToPath(e.instancePath)}`;
    return where ? `${where}: ${describe(e)}` : describe(e);
  });
}

function jsonPointerToPath(p: string): string {
  if (!p) return '';
  return p
    .split('/')
    .slice(1)
    .map((seg) => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `.${seg}`))
    .join('');
}

function describe(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return `unknown property "${String(p.additionalProperty)}"`;
    case 'required':
      return `missing required property "${String(p.missingProperty)}"`;
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map((x) => JSON.stringify(x)).join(', ')}`;
    case 'type':
      return `must be ${String(p.type)}`;
    default:
      return e.message ?? e.keyword;
  }
}
