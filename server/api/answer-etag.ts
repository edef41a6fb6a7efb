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
 *   - the service's answer fingerprint (kernel version, query settings, reranker and embedder).
 *
 * null when no tag can be computed up front (a malformed parameter, an unknown or renamed
 * library): the request then runs and its error answer carries no ETag.
 */
import { createHash } from 'node:crypto';
import { decide } from '../../core/policy.ts';
import { getPolicy } from '../../core/settings.ts';
import { formatLibraryId, parseLibraryId } from '../../core/library-id.ts';
import type { ApiService } from './service.ts';
import type { Params } from './params.ts';

/** The parameters that shape each cacheable answer; others are ignored by the routes. */
export const ANSWER_PARAMS: Record<string, readonly string[]> = {
  '/api/v2/context': ['libraryId', 'query', 'type', 'tokens', 'fast'],
  '/api/v2/libs/search': ['libraryName', 'query', 'fast'],
};

function normalisedParams(path: string, params: Params): Array<[string, string]> | null {
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
      try {
        const parsed = parseLibraryId(raw.trim());
        v = formatLibraryId(parsed.id, parsed.version); // /lib/1.0 and /lib@1.0 are one request
      } catch {
        return null;
      }
    }
    if (name === 'type' && raw === '') continue;
    if (name === 'type' && raw === 'txt') continue; // the default
    out.push([name, v]);
  }
  return out;
}

export async function answerEtag(service: ApiService, path: string, params: Params): Promise<string | null> {
  const request = normalisedParams(path, params);
  if (!request) return null;
  const { store, clock } = service.kernel;
  const policy = await getPolicy(store);
  const now = clock.now();
  let state: unknown;
  if (path === '/api/v2/context') {
    const raw = params.libraryId;
    if (typeof raw !== 'string') return null;
    let parsed: ReturnType<typeof parseLibraryId>;
    try {
      parsed = parseLibraryId(raw.trim());
    } catch {
      return null;
    }
    const library = await store.getLibrary(parsed.id);
    if (!library) return null;
    const versions = await store.listVersions(library.id);
    state = {
      library,
      builds: versions.map((v) => [v.version, v.state, v.activeBuildId, v.lastUpdateDate]),
      allowed: decide(policy, library, now).allowed,
    };
  } else {
    const libraries = await store.listLibraries();
    state = libraries.map((l) => [l, decide(policy, l, now).allowed]);
  }
  const digest = createHash('sha256')
    .update(JSON.stringify([path, request, state, policy, service.answerFingerprint()]))
    .digest('base64url')
    .slice(0, 32);
  return `"${digest}"`;
}
