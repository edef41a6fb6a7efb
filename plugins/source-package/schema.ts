import type { JsonSchema } from '../../core/define.ts';

/** Operator options shared by the `npm` and `pypi` sources (config), after ajv applied the defaults. */
export interface PackageOptions {
  /** Base URL of the npm registry used when a library names none. */
  npmRegistry: string;
  /** Base URL of the PyPI index (the JSON API lives under `<index>/pypi/...`). */
  pypiIndex: string;
  /** Largest registry document or package archive downloaded, in bytes (never more than the network policy's maxResponseBytes). */
  maxDownloadBytes: number;
  /** Largest size an archive may expand to, in bytes. */
  maxUnpackedBytes: number;
  /** Most documentation files (markdown, rst, .d.ts) read from one package. */
  maxFiles: number;
  /** Bigger documentation files are skipped with a log line. */
  maxFileBytes: number;
  /** Requests per URL on transient failures (5xx, 429, network errors), the first included. */
  retryAttempts: number;
  /** Delay before the first retry, in milliseconds; doubled on each further retry. */
  retryBaseDelayMs: number;
}

export const DEFAULT_PACKAGE_OPTIONS: Readonly<PackageOptions> = Object.freeze({
  npmRegistry: 'https://registry.npmjs.org',
  pypiIndex: 'https://pypi.org',
  maxDownloadBytes: 50 * 1024 * 1024,
  maxUnpackedBytes: 200 * 1024 * 1024,
  maxFiles: 2000,
  maxFileBytes: 4 * 1024 * 1024,
  retryAttempts: 4,
  retryBaseDelayMs: 500,
});

function optionsSchema(registryKey: 'npmRegistry' | 'pypiIndex', what: string): JsonSchema {
  const d = DEFAULT_PACKAGE_OPTIONS;
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      [registryKey]: { type: 'string', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', default: d[registryKey], description: `Base URL of the ${what} used when a library names none (a private mirror, for instance).` },
      maxDownloadBytes: { type: 'integer', minimum: 1024, default: d.maxDownloadBytes, description: 'Largest registry document or package archive downloaded.' },
      maxUnpackedBytes: { type: 'integer', minimum: 1024, default: d.maxUnpackedBytes, description: 'Largest size an archive may expand to.' },
      maxFiles: { type: 'integer', minimum: 1, default: d.maxFiles, description: 'Most documentation files read from one package.' },
      maxFileBytes: { type: 'integer', minimum: 1, default: d.maxFileBytes, description: 'Bigger documentation files are skipped with a log line.' },
      retryAttempts: { type: 'integer', minimum: 1, maximum: 10, default: d.retryAttempts, description: 'Requests per URL on transient failures, the first included.' },
      retryBaseDelayMs: { type: 'integer', minimum: 0, maximum: 60000, default: d.retryBaseDelayMs, description: 'Delay before the first retry (doubled on each further retry).' },
    },
  };
}

export const npmOptionsSchema = optionsSchema('npmRegistry', 'npm registry');
export const pypiOptionsSchema = optionsSchema('pypiIndex', 'PyPI index');

const registryUrl = { type: 'string', minLength: 1, maxLength: 2000, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://' };

/** A library's source parameters for npm. */
export const npmSpecSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 214, description: 'The package name, e.g. "zod" or "@scope/pkg".' },
    registry: { ...registryUrl, description: 'Registry base URL (default: the operator\'s npmRegistry option).' },
  },
};

/** A library's source parameters for PyPI. */
export const pypiSpecSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200, description: 'The project name, e.g. "requests".' },
    index: { ...registryUrl, description: 'Index base URL (default: the operator\'s pypiIndex option).' },
  },
};

/** Options of the `packages` source: both registries. */
export const packagesOptionsSchema: JsonSchema = {
  ...npmOptionsSchema,
  properties: { ...(npmOptionsSchema.properties as object), ...(pypiOptionsSchema.properties as object) },
};

/** A `/packages/<name>` library: the name, and the registry it was resolved to when added. */
export const packagesSpecSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 214, description: 'The package name.' },
    registry: { enum: ['npm', 'pypi'], description: 'Filled in when the library is added: where the name was found.' },
  },
};
