import type { JsonSchema } from '../../core/define.ts';
import { RefdeskError } from '../../core/errors.ts';

/** Operator options of the `openapi` source (config), after ajv applied the defaults. */
export interface OpenApiOptions {
  /** Largest spec document read, in bytes; a bigger one ends in a 422 `too_large`. */
  maxSpecBytes: number;
  /** Most operations rendered from one spec; more ends in a 422 `too_large`. */
  maxOperations: number;
  /** Attempts for one download when the network fails or the server answers 5xx/429. */
  fetchAttempts: number;
}

export const MiB = 1024 * 1024;

export const DEFAULT_OPENAPI_OPTIONS: Readonly<OpenApiOptions> = Object.freeze({
  maxSpecBytes: 20 * MiB,
  maxOperations: 5000,
  fetchAttempts: 3,
});

/** Operator options (config). ajv fills the defaults (`useDefaults`). */
export const openApiOptionsSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    maxSpecBytes: {
      type: 'integer',
      minimum: 1,
      default: DEFAULT_OPENAPI_OPTIONS.maxSpecBytes,
      description: 'Largest OpenAPI/Swagger document read, in bytes.',
    },
    maxOperations: {
      type: 'integer',
      minimum: 1,
      default: DEFAULT_OPENAPI_OPTIONS.maxOperations,
      description: 'Most operations indexed from one spec.',
    },
    fetchAttempts: {
      type: 'integer',
      minimum: 1,
      maximum: 10,
      default: DEFAULT_OPENAPI_OPTIONS.fetchAttempts,
      description: 'Attempts to download a spec when the network fails or the server answers 5xx/429.',
    },
  },
};

/** A library's source parameters: exactly one of `url` or `path`. */
export const openApiSpecSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  oneOf: [{ required: ['url'] }, { required: ['path'] }],
  properties: {
    url: {
      type: 'string',
      minLength: 1,
      maxLength: 2000,
      pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
      description: 'http(s) URL of an OpenAPI 3.0/3.1 or Swagger 2.0 document (JSON or YAML).',
    },
    path: {
      type: 'string',
      minLength: 1,
      maxLength: 1000,
      description: 'A spec file under <dataDir>/uploads (absolute, or relative to that folder).',
    },
  },
};

/** Fills missing options with the defaults (ajv does it for config; tests may not) and checks them. */
export function resolveOptions(options: Partial<OpenApiOptions> | undefined): OpenApiOptions {
  const given = Object.fromEntries(Object.entries(options ?? {}).filter(([, v]) => v !== undefined));
  const o = { ...DEFAULT_OPENAPI_OPTIONS, ...given } as OpenApiOptions;
  for (const key of ['maxSpecBytes', 'maxOperations', 'fetchAttempts'] as const) {
    if (!Number.isSafeInteger(o[key]) || o[key] < 1) {
      throw new RefdeskError('config_error', `source-openapi: option ${key} must be a positive integer`);
    }
  }
  return o;
}
