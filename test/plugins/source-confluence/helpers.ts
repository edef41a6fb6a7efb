import type { PreviousDocument, SourceDocument } from '../../../core/contracts.ts';
import { createFetch } from '../../../core/services.ts';
import { ConfluenceSource } from '../../../plugins/source-confluence/confluence-source.ts';
import type { ConfluenceOptions } from '../../../plugins/source-confluence/schema.ts';

export const EMAIL = 'dev@quasar.example';
export const API_TOKEN = 'ATATT3xFfGF0-cloud-token-7d1e2f';
export const PAT = 'NjQ5ODc2-server-pat-MzIxOTk4';

/** A source with small pages of results (pagination) and quick retries. */
export function makeSource(options: Partial<ConfluenceOptions> = {}): ConfluenceSource {
  return new ConfluenceSource({ pageSize: 5, retryBaseMs: 5, maxRetryWaitMs: 2000, ...options }, { fetch: createFetch(10_000) });
}

/** What the kernel would hand back on the next refresh. */
export function previousOf(docs: SourceDocument[]): Map<string, PreviousDocument> {
  return new Map(docs.map((d) => [d.path, { hash: d.hash!, meta: d.meta ?? {} }]));
}
