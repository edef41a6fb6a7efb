/**
 * The library ID of a spec the caller names no ID for: the source definition's `deriveId` when it
 * has one; otherwise `/<idPrefix>/<slug of the spec's first string field>` (the first string
 * property of its specSchema, in schema order, that is not secret and has a value; then the first
 * string value of the spec itself). Every result is checked with parseLibraryId by the caller.
 */
import { RefdeskError } from '../../core/errors.ts';
import type { SourceDefinition } from '../../core/define.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { AddLibraryInput } from '../../core/ingest.ts';
import { validate } from '../../core/validate.ts';
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

/**
 * The add input with its library ID when the caller named none and the source has no deriveId
 * (POST /api/admin/add, the web UI's form, `refdesk add --source <kind> --spec`). An invalid spec
 * is left as is: addLibrary refuses it naming the field.
 */
export function withDerivedId(kernel: Kernel, input: AddLibraryInput): AddLibraryInput {
  const def = kernel.sources.get(input.source)?.def;
  if (!def || input.id || input.name || def.deriveId || !input.spec || typeof input.spec !== 'object') return input;
  if (validate(def.specSchema, structuredClone(input.spec), 'spec').length > 0) return input;
  return { ...input, id: libraryIdForSpec(def, input.spec) };
}
