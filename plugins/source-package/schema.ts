import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { StringEnum } from '../../core/schema-types.ts';

/** Defaults of the operator options of the `npm`, `pypi` and `packages` sources (config); the schemas below describe each. */
export const DEFAULT_PACKAGE_OPTIONS = Object.freeze({
  npmRegistry: 'https://registry.npmjs.org',
  pypiIndex: 'https://pypi.org',
  maxDownloadBytes: 50 * 1024 * 1024,
  maxUnpackedBytes: 200 * 1024 * 1024,
  maxFiles: 2000,
  maxFileBytes: 4 * 1024 * 1024,
  retryAttempts: 4,
  retryBaseDelayMs: 500,
});

const d = DEFAULT_PACKAGE_OPTIONS;
const registryOption = (key: 'npmRegistry' | 'pypiIndex', what: string) =>
  Type.String({ pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', default: d[key], description: `Base URL of the ${what} used when a library names none (a private mirror, for instance).` });
const downloadOptions = {
  maxDownloadBytes: Type.Integer({ minimum: 1024, default: d.maxDownloadBytes, description: 'Largest registry document or package archive downloaded.' }),
  maxUnpackedBytes: Type.Integer({ minimum: 1024, default: d.maxUnpackedBytes, description: 'Largest size an archive may expand to.' }),
  maxFiles: Type.Integer({ minimum: 1, default: d.maxFiles, description: 'Most documentation files read from one package.' }),
  maxFileBytes: Type.Integer({ minimum: 1, default: d.maxFileBytes, description: 'Bigger documentation files are skipped with a log line.' }),
  retryAttempts: Type.Integer({ minimum: 1, maximum: 10, default: d.retryAttempts, description: 'Requests per URL on transient failures, the first included.' }),
  retryBaseDelayMs: Type.Integer({ minimum: 0, maximum: 60000, default: d.retryBaseDelayMs, description: 'Delay before the first retry (doubled on each further retry).' }),
};
const npmRegistry = registryOption('npmRegistry', 'npm registry');
const pypiIndex = registryOption('pypiIndex', 'PyPI index');

export const npmOptionsSchema = Type.Object({ npmRegistry, ...downloadOptions }, { additionalProperties: false });
export const pypiOptionsSchema = Type.Object({ pypiIndex, ...downloadOptions }, { additionalProperties: false });
/** Options of the `packages` source: both registries. */
export const packagesOptionsSchema = Type.Object({ npmRegistry, ...downloadOptions, pypiIndex }, { additionalProperties: false });

/** Operator options shared by the `npm`, `pypi` and `packages` sources (config), after ajv applied the defaults. */
export type PackageOptions = Static<typeof packagesOptionsSchema>;

const registryUrl = (description: string): TSchema => Type.String({ minLength: 1, maxLength: 2000, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', description });

/** A library's source parameters for npm. */
export const npmSpecSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 214, description: 'The package name, e.g. "zod" or "@scope/pkg".' }),
    registry: Type.Optional(registryUrl('Registry base URL (default: the operator\'s npmRegistry option).')),
  },
  { additionalProperties: false },
);

/** A library's source parameters for PyPI. */
export const pypiSpecSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'The project name, e.g. "requests".' }),
    index: Type.Optional(registryUrl('Index base URL (default: the operator\'s pypiIndex option).')),
  },
  { additionalProperties: false },
);

/** A `/packages/<name>` library: the name, and the registry it was resolved to when added. */
export const packagesSpecSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 214, description: 'The package name.' }),
    registry: Type.Optional(StringEnum(['npm', 'pypi'], { description: 'Filled in when the library is added: where the name was found.' })),
  },
  { additionalProperties: false },
);
