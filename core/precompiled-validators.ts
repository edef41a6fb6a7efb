/**
 * Validators compiled at build time, by schema. In the sources this table is empty and every
 * schema is compiled by ajv at its first validation (core/validate.ts); `npm run build` bundles a
 * generated table in its place (scripts/bundle.js: the config schema and every built-in
 * plugin's options and spec schemas, ajv standalone code with the same options), so the
 * compiled server validates its configuration without loading ajv. The key is the schema's
 * JSON text: a schema that changed since the build is simply not found, and compiled.
 */
import type { ValidateFunction } from 'ajv';

export const precompiledValidators: ReadonlyMap<string, ValidateFunction> = new Map();
