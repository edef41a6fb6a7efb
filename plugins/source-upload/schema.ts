import { Type } from '@sinclair/typebox';
import { OptionalStrings } from '../../core/schema-types.ts';
import { DEFAULT_OPTIONS } from './limits.ts';

/** Operator options (config). ajv fills the defaults (`useDefaults`). */
export const uploadOptionsSchema = Type.Object(
  {
    maxFiles: Type.Integer({
      minimum: 1,
      default: DEFAULT_OPTIONS.maxFiles,
      description: 'Most documentation files one library may have.',
    }),
    maxBytes: Type.Integer({
      minimum: 1,
      default: DEFAULT_OPTIONS.maxBytes,
      description: 'Most bytes of documentation read for one library, counted after decompression.',
    }),
    maxFileBytes: Type.Integer({
      minimum: 1,
      default: DEFAULT_OPTIONS.maxFileBytes,
      description: 'Bigger documentation files are skipped with a warning.',
    }),
    maxArchiveEntries: Type.Integer({
      minimum: 1,
      default: DEFAULT_OPTIONS.maxArchiveEntries,
      description: 'Most entries of any kind (files, directories) in one archive.',
    }),
    extensions: Type.Array(Type.String({ pattern: '^\\.[^/\\\\]+$' }), {
      minItems: 1,
      uniqueItems: true,
      default: [...DEFAULT_OPTIONS.extensions],
      description: 'File name extensions read as documentation.',
    }),
  },
  { additionalProperties: false },
);

/** A library's source parameters. */
export const uploadSpecSchema = Type.Object(
  {
    path: Type.String({
      minLength: 1,
      description: 'Absolute path of a folder, a documentation file, or a .zip / .tar.gz / .tgz / .tar archive on the server.',
    }),
    include: OptionalStrings(
      'Path prefixes relative to the root, e.g. ["docs/"]; only files under one of them become documents (an include directive may still read a file elsewhere in the upload).',
    ),
    exclude: OptionalStrings('Path prefixes relative to the root that are never read, not even by an include directive.'),
  },
  { additionalProperties: false },
);
