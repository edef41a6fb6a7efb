import Router from '@koa/router';
import type { Kernel } from '../../core/kernel.ts';
import type { LibraryRecord } from '../../core/contracts.ts';
import { searchLibraries } from '../../core/query.ts';
import { requiredString } from '../params.ts';

/** The public catalog fields of a library (the spec's Library shape). */
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

export function searchRoutes(kernel: Kernel): Router {
  const r = new Router();
  r.get('/api/v2/libs/search', async (ctx) => {
    const libraryName = requiredString(ctx, 'libraryName');
    const query = requiredString(ctx, 'query');
    const libs = await searchLibraries(kernel, libraryName, query);
    ctx.body = { results: libs.map(libraryJson), searchFilterApplied: false };
  });
  return r;
}
