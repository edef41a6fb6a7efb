import { Type, type Static } from '@sinclair/typebox';
import { RefdeskError } from '../../core/errors.ts';

export const MiB = 1024 * 1024;

/** Defaults of the `openapi` source's operator options (config); the schema below describes each. */
export const DEFAULT_OPENAPI_OPTIONS = Object.freeze({
  maxSpecBytes: 20 * MiB,
  maxOperations: 5000,
  fetchAttempts: 3,
});

/** Operator options (config). ajv fills the defaults (`useDefaults`). */
export const openApiOptionsSchema = Type.Object(
  {
    maxSpecBytes: Type.Integer({
      minimum: 1,
      default: DEFAULT_OPENAPI_OPTIONS.maxSpecBytes,
      description: 'Largest OpenAPI/Swagger document read, in bytes.',
    }),
    maxOperations: Type.Integer({
      minimum: 1,
      default: DEFAULT_OPENAPI_OPTIONS.maxOperations,
      description: 'Most operations indexed from one spec.',
    }),
    fetchAttempts: Type.Integer({
      minimum: 1,
      maximum: 10,
      default: DEFAULT_OPENAPI_OPTIONS.fetchAttempts,
      description: 'Attempts to download a spec when the network fails or the server answers 5xx/429.',
    }),
  },
  { additionalProperties: false },
);
/** Operator options of the `openapi` source (config), after ajv applied the defaults. */
export type OpenApiOptions = Static<typeof openApiOptionsSchema>;

/** A library's source parameters: exactly one of `url` or `path`. */
export const openApiSpecSchema = Type.Object(
  {
    url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
        description: 'http(s) URL of an OpenAPI 3.0/3.1 or Swagger 2.0 document (JSON or YAML).',
      }),
    ),
    path: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description: 'A spec file under <dataDir>/uploads (absolute, or relative to that folder).',
      }),
    ),
  },
  { additionalProperties: false, oneOf: [{ required: ['url'] }, { required: ['path'] }] },
);

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
