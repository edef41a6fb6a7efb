import type { JsonSchema } from '../../core/define.ts';
import { DEFAULT_OPTIONS } from './limits.ts';

/** Operator options (config). ajv fills the defaults (`useDefaults`). */
export const uploadOptionsSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    maxFiles: {
      type: 'integer',
      minimum: 1,
      default: DEFAULT_OPTIONS.maxFiles,
      description: 'Most documentation files one library may have.',
    },
    maxBytes: {
      type: 'integer',
      minimum: 1,
      default: DEFAULT_OPTIONS.maxBytes,
      description: 'Most bytes of documentation read for one library, counted after decompression.',
    },
    maxFileBytes: {
      type: 'integer',
      minimum: 1,
      default: DEFAULT_OPTIONS.maxFileBytes,
      description: 'Bigger documentation files are skipped with a warning.',
    },
    maxArchiveEntries: {
      type: 'integer',
      minimum: 1,
      default: DEFAULT_OPTIONS.maxArchiveEntries,
      description: 'Most entries of any kind (files, directories) in one archive.',
    },
    extensions: {
      type: 'array',
      items: { type: 'string', pattern: '^\\.[^/\\\\]+$' },
      minItems: 1,
      uniqueItems: true,
      default: [...DEFAULT_OPTIONS.extensions],
      description: 'File name extensions read as documentation.',
    },
  },
};

/** A library's source parameters. */
export const uploadSpecSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['path'],
  properties: {
    path: {
      type: 'string',
      minLength: 1,
      description: 'Absolute path of a folder, a documentation file, or a .zip / .tar.gz / .tgz / .tar archive on the server.',
    },
    include: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      description: 'Path prefixes relative to the root, e.g. ["docs/"]; only files under one of them become documents (an include directive may still read a file elsewhere in the upload).',
    },
    exclude: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      description: 'Path prefixes relative to the root that are never read, not even by an include directive.',
    },
  },
};
