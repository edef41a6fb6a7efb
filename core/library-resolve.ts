/**
 * Which library an ID a client gave names, asking the store when the text has two readings:
 * `/group/sub/project` is the library `/group/sub/project` (a GitLab subgroup project) when the
 * store knows it (or an alias of it), otherwise `/group/sub` at version `project`. The slash
 * version form of two-segment IDs (`/owner/repo/v1`) is unaffected; `@` pins are never
 * ambiguous.
 */
import type { Store } from './contracts.ts';
import { libraryIdReadings, type LibraryId } from './library-id.ts';

export type LibraryLookup = Pick<Store, 'getLibrary' | 'resolveLibraryAlias'>;

/**
 * The reading of `input` whose library exists (the whole path first); when none exists, the
 * whole path for `whenUnknown: 'whole'` (adding a library) or the versioned reading (asking).
 */
export async function resolveLibraryId(store: LibraryLookup, input: string, whenUnknown: 'whole' | 'versioned' = 'versioned'): Promise<LibraryId> {
  const readings = libraryIdReadings(input);
  if (readings.length === 1) return readings[0];
  for (const r of readings) {
    if ((await store.getLibrary(r.id)) || (await store.resolveLibraryAlias(r.id))) return r;
  }
  return whenUnknown === 'whole' ? readings[0] : readings[readings.length - 1];
}

/** How an unknown ID is named in a not-found message: both readings when the text has two. */
export function describeUnknownLibrary(input: string, parsed: LibraryId): string {
  const readings = libraryIdReadings(input);
  if (readings.length < 2) return `"${parsed.id}"`;
  const [whole, versioned] = readings;
  return `"${whole.id}" (or "${versioned.id}" at version "${versioned.version}")`;
}
