/**
 * Small TypeBox helpers for plugin schemas (exported by `refdesk/core` beside `Type`).
 */
import { Type, type SchemaOptions, type TArray, type TOptional, type TString, type TUnsafe } from '@sinclair/typebox';

/**
 * A string that must be one of `values`: a plain JSON Schema `enum` (what the web UI's add form
 * turns into a select), typed as the union of the values. TypeBox's own `Type.Union` of literals
 * would be an `anyOf` of `const`s instead.
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

/** An optional list of non-empty strings (path prefixes, URL patterns): a one-per-line textarea in the add form. */
export function OptionalStrings(description: string): TOptional<TArray<TString>> {
  return Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description }));
}
