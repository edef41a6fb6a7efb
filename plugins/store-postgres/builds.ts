/** The builds role on PostgreSQL: builds, snippets, documents, search, index segments in chunked rows. Not written yet. */
import type { BuildDocument, BuildStore, SearchHit, SegmentFileRef, Snippet, StoredSnippet, VersionRecord } from '../../core/contracts.ts';
import type { PgCatalog } from './catalog.ts';
import { notBuilt, PgRole, type PgDatabase } from './database.ts';

export class PgBuilds extends PgRole implements BuildStore {
  constructor(
    database: PgDatabase,
    protected readonly catalog: PgCatalog,
  ) {
    super(database);
  }
  async beginBuild(_libraryId: string, _version: string, _jobId: string | null): Promise<string> {
    return notBuilt('builds', 'beginBuild');
  }
  async addSnippets(_buildId: string, _snippets: Snippet[]): Promise<void> {
    return notBuilt('builds', 'addSnippets');
  }
  async addDocuments(_buildId: string, _documents: BuildDocument[]): Promise<void> {
    return notBuilt('builds', 'addDocuments');
  }
  async getDocuments(_libraryId: string, _version: string): Promise<Map<string, BuildDocument>> {
    return notBuilt('builds', 'getDocuments');
  }
  async finalizeBuild(_buildId: string): Promise<VersionRecord> {
    return notBuilt('builds', 'finalizeBuild');
  }
  async failBuild(_buildId: string): Promise<void> {
    return notBuilt('builds', 'failBuild');
  }
  async getSnippets(_libraryId: string, _version: string): Promise<StoredSnippet[]> {
    return notBuilt('builds', 'getSnippets');
  }
  async search(_libraryId: string, _version: string, _query: string, _limit: number): Promise<SearchHit[]> {
    return notBuilt('builds', 'search');
  }
  async segmentFile(_libraryId: string, _version: string): Promise<SegmentFileRef | null> {
    return notBuilt('builds', 'segmentFile');
  }
}
