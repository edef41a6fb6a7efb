/** The not-found errors every Store gives, worded once so every Store answers alike. */
import type { LibraryState } from './contracts.ts';
import { RefdeskError } from './errors.ts';

export function libraryNotFound(id: string): RefdeskError {
  return new RefdeskError('library_not_found', `Library "${id}" not found. Check the library ID, or add the library first.`);
}

/**
 * Why a known library serves nothing for `version` ('' = default), given that version's state
 * and the library's finalized pinned versions.
 */
export function notServedError(libraryId: string, version: string, state: LibraryState, pinned: string[]): RefdeskError {
  const available = pinned.length > 0 ? `Available versions: ${pinned.join(', ')}.` : 'It has no pinned versions.';
  if (version !== '') {
    const why = state === 'processing' ? ' yet: it is still being processed' : state === 'error' ? ': its last build failed' : '';
    return new RefdeskError(
      'version_not_found',
      `Version "${version}" of library "${libraryId}" is not available${why}. ${available} Omit the version to use the default.`,
    );
  }
  if (state === 'processing') {
    return new RefdeskError('library_not_finalized', `Library "${libraryId}" is still being processed; try again in a moment.`);
  }
  if (pinned.length > 0) {
    return new RefdeskError('version_not_found', `Library "${libraryId}" has no default version built. ${available}`);
  }
  if (state === 'error') {
    return new RefdeskError(
      'library_not_finalized',
      `Library "${libraryId}" has no documentation yet: its last build failed. See the job log, fix the source and refresh the library.`,
    );
  }
  return new RefdeskError('library_not_finalized', `Library "${libraryId}" has not been built yet; refresh it to build its documentation.`);
}
