/**
 * The ETag of a search or context answer, computed from what shapes the answer rather than from
 * its bytes, so a matching If-None-Match is answered 304 before any search runs:
 *
 *   - the normalised request: the path and its relevant parameters, sorted (the library ID in
 *     its canonical form, the query trimmed, `type` defaulting to txt);
 *   - the state of what is searched: for context, the library record and every version's
 *     served build (a refresh that finalizes a new build changes it); for library search, every
 *     library record;
 *   - the policy in force and what it decides for those libraries now (a policy change, or a
 *     library growing past the policy's maximum age, changes it);
 *   - the service's answer fingerprint (kernel version, query settings, reranker, and the
 *     providers' endpoints and models from Settings);
 *   - with an embedder configured: its fingerprint and the versions' vectors (core/vectors.ts
 *     vectorsTag), so an embed job finishing gives a new tag.
 *
 * null when no tag can be computed up front (a malformed parameter, an unknown or renamed
 * library): the request then runs and its error answer carries no ETag.
 *
 * A library ID is read as the routes read it (core/library-resolve.ts): `/group/sub/project` is
 * that library when the store knows it, else `/group/sub` at version `project`. For library
 * search the tag comes with the catalog it was computed from (the libraries, the policy, the
 * time), which the route searches instead of reading the catalog a second time.
 */
import { createHash } from 'node:crypto';
import { decide, getPolicy, type Policy } from '../access/policy.ts';
import { vectorsTag } from '../../core/vectors.ts';
import { formatLibraryId, type LibraryId } from '../../core/library-id.ts';
import { resolveLibraryId } from '../../core/library-resolve.ts';
import type { LibraryRecord } from '../../core/contracts.ts';
import type { ApiService } from './service.ts';
import type { Params } from './params.ts';

/** The parameters that shape each cacheable answer; others are ignored by the routes. */
export const ANSWER_PARAMS: Record<string, readonly string[]> = {
  '/api/v2/context': ['libraryId', 'query', 'type', 'tokens', 'fast'],
  '/api/v2/libs/search': ['libraryName', 'query', 'fast'],
};

/** The catalog one library search request reads once: for its ETag and for the search. */
export interface CatalogSnapshot {
  libraries: LibraryRecord[];
  policy: Policy;
  now: Date;
}

export interface AnswerTag {
  etag: string;
  /** For library search: what the tag was computed from, for the route to search. */
  catalog?: CatalogSnapshot;
}

/** The library a context request names, read as the route reads it; null when malformed. */
async function requestedLibrary(service: ApiService, params: Params): Promise<LibraryId | null> {
  const raw = params.libraryId;
  if (typeof raw !== 'string') return null;
  try {
    return await resolveLibraryId(service.kernel.store, raw.trim());
  } catch {
    return null;
  }
}

function normalisedParams(path: string, params: Params, library: LibraryId | null): Array<[string, string]> | null {
  const names = ANSWER_PARAMS[path];
  if (!names) return null;
  const out: Array<[string, string]> = [];
  for (const name of [...names].sort()) {
    const raw = params[name];
    if (raw === undefined) continue;
    if (typeof raw !== 'string') return null;
    let v = raw;
    if (name === 'query' || name === 'libraryName') v = raw.trim();
    if (name === 'libraryId') {
      if (!library) return null;
      v = formatLibraryId(library.id, library.version); // /lib/1.0 and /lib@1.0 are one request
    }
    if (name === 'type' && raw === '') continue;
    if (name === 'type' && raw === 'txt') continue; // the default
    out.push([name, v]);
  }
  return out;
}

/**
 * A library record's digest, kept per record when the store hands out frozen records (the
 * embedded store's in-memory catalog): a library search's tag over 1,000 libraries then hashes
 * 1,000 short digests instead of serializing every record (about 5 ms of CPU a request).
 */
const digestOfRecord = new WeakMap<object, string>();
function recordDigest(lib: { versions: readonly string[]; source: { spec: object } }): string {
  const frozen = Object.isFrozen(lib) && Object.isFrozen(lib.versions) && Object.isFrozen(lib.source) && Object.isFrozen(lib.source.spec);
  let d = frozen ? digestOfRecord.get(lib) : undefined;
  if (d === undefined) {
    d = createHash('sha256').update(JSON.stringify(lib)).digest('base64url');
    if (frozen) digestOfRecord.set(lib, d);
  }
  return d;
}

export async function answerEtag(service: ApiService, path: string, params: Params): Promise<AnswerTag | null> {
  if (!ANSWER_PARAMS[path]) return null;
  const isContext = path === '/api/v2/context';
  const parsed = isContext ? await requestedLibrary(service, params) : null;
  const request = normalisedParams(path, params, parsed);
  if (!request) return null;
  const { store, clock } = service.kernel;
  const policy = await getPolicy(store);
  const now = clock.now();
  let state: unknown;
  let catalog: CatalogSnapshot | undefined;
  if (isContext) {
    if (!parsed) return null;
    const library = await store.getLibrary(parsed.id);
    if (!library) return null;
    const versions = await store.listVersions(library.id);
    state = {
      library,
      builds: versions.map((v) => [v.version, v.state, v.activeBuildId, v.lastUpdateDate]),
      allowed: decide(policy, library, now).allowed,
    };
    const vectors = await vectorsTag(service.kernel, versions.map((v) => v.activeBuildId));
    if (vectors !== null) state = { ...(state as object), vectors };
  } else {
    const libraries = await store.listLibraries();
    state = libraries.map((l) => [recordDigest(l), decide(policy, l, now).allowed]);
    const vectors = await vectorsTag(service.kernel, null);
    if (vectors !== null) state = { libraries: state, vectors };
    catalog = { libraries, policy, now };
  }
  const fingerprint = await service.answerFingerprint();
  const digest = createHash('sha256')
    .update(JSON.stringify([path, request, state, policy, fingerprint]))
    .digest('base64url')
    .slice(0, 32);
  return { etag: `"${digest}"`, catalog };
}
