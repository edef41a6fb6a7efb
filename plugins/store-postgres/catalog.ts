/** The catalog role on PostgreSQL: libraries, versions, renames (aliases). Not written yet. */
import type { CatalogStore, LibraryInput, LibraryRecord, VersionRecord } from '../../core/contracts.ts';
import { notBuilt, PgRole } from './database.ts';

export class PgCatalog extends PgRole implements CatalogStore {
  async upsertLibrary(_input: LibraryInput): Promise<LibraryRecord> {
    return notBuilt('catalog', 'upsertLibrary');
  }
  async getLibrary(_id: string): Promise<LibraryRecord | null> {
    return notBuilt('catalog', 'getLibrary');
  }
  async listLibraries(): Promise<LibraryRecord[]> {
    return notBuilt('catalog', 'listLibraries');
  }
  async deleteLibrary(_id: string, _version?: string): Promise<boolean> {
    return notBuilt('catalog', 'deleteLibrary');
  }
  async renameLibrary(_oldId: string, _newId: string): Promise<LibraryRecord> {
    return notBuilt('catalog', 'renameLibrary');
  }
  async resolveLibraryAlias(_id: string): Promise<string | null> {
    return notBuilt('catalog', 'resolveLibraryAlias');
  }
  async getVersion(_libraryId: string, _version: string): Promise<VersionRecord | null> {
    return notBuilt('catalog', 'getVersion');
  }
  async listVersions(_libraryId: string): Promise<VersionRecord[]> {
    return notBuilt('catalog', 'listVersions');
  }
}
