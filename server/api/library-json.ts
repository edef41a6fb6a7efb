import type { LibraryRecord } from '../../core/contracts.ts';

/** The public catalog fields of a library (the API spec's Library shape). */
export function libraryJson(lib: LibraryRecord) {
  return {
    id: lib.id,
    title: lib.title,
    description: lib.description,
    branch: lib.branch,
    lastUpdateDate: lib.lastUpdateDate,
    state: lib.state,
    totalTokens: lib.totalTokens,
    totalSnippets: lib.totalSnippets,
    stars: lib.stars,
    trustScore: lib.trustScore,
    benchmarkScore: lib.benchmarkScore,
    versions: lib.versions,
  };
}

export type LibraryJson = ReturnType<typeof libraryJson>;
