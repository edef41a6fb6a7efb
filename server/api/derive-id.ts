/**
 * The library ID of a spec the caller names no ID for: the source definition's `deriveId` when it
 * has one; otherwise `/<idPrefix>/<slug of the spec's first string field>` (the first string
 * property of its specSchema, in schema order, that is not secret and has a value; then the first
 * string value of the spec itself). Every result is checked with parseLibraryId by the caller.
 */
import { RefdeskError } from '../../core/errors.ts';
import type { SourceDefinition } from '../../core/define.ts';
import { slugifyLibraryName } from '../../core/library-id.ts';

/** The first non-secret string value of a spec, in its schema's property order. */
function firstStringField(def: SourceDefinition, spec: Record<string, unknown>): string | undefined {
  const props = (def.specSchema.properties ?? {}) as Record<string, Record<string, unknown>>;
  for (const [name, prop] of Object.entries(props)) {
    if (prop?.writeOnly) continue;
    const v = spec[name];
    if (typeof v === 'string' && v.trim() !== '') return v;
  }
  return Object.entries(spec).find(([name, v]) => typeof v === 'string' && v.trim() !== '' && !props[name]?.writeOnly)?.[1] as string | undefined;
}

/** The library ID a validated spec of this source gives when the caller names none. */
export function libraryIdForSpec(def: SourceDefinition, spec: Record<string, unknown>): string {
  if (def.deriveId) return def.deriveId(structuredClone(spec));
  if (def.idPrefix === null) throw new RefdeskError('invalid_request', `The "${def.kind}" source needs a full library ID (/owner/repo): its plugin derives none.`);
  const first = firstStringField(def, spec);
  const slug = first ? slugifyLibraryName(first) : '';
  if (!slug) throw new RefdeskError('invalid_request', `No library ID can be derived for this "${def.kind}" spec: its first string field has no letters or digits; give a library ID.`);
  return `/${def.idPrefix}/${slug}`;
}
