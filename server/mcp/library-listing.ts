/** The text resolve-library-id answers: the matching libraries, best first. */
import type { LibrarySearchResult, LibrarySummary } from './backend.ts';

/** High from 7, Medium from 4, Low above 0; a score of 0 means not rated (null). */
export function trustLabel(score: number): 'High' | 'Medium' | 'Low' | null {
  if (!(score > 0)) return null;
  if (score >= 7) return 'High';
  if (score >= 4) return 'Medium';
  return 'Low';
}

function entry(lib: LibrarySummary): string {
  const lines = [`- Title: ${lib.title || lib.id}`, `- Library ID: ${lib.id}`];
  if (lib.description) lines.push(`- Description: ${lib.description}`);
  lines.push(`- Code snippets: ${lib.totalSnippets}`);
  const trust = trustLabel(lib.trustScore);
  lines.push(`- Trust: ${trust ?? 'Not rated'}`);
  if (lib.benchmarkScore > 0) lines.push(`- Benchmark score: ${Math.round(lib.benchmarkScore * 10) / 10}`);
  if (lib.versions.length > 0) lines.push(`- Versions: ${lib.versions.join(', ')} (pin one as ${lib.id}@<version>; without a version you get the default branch)`);
  if (lib.state !== 'finalized') lines.push(`- State: ${lib.state} (still being indexed; it may not answer yet)`);
  return lines.join('\n');
}

const FILTER_NOTE =
  'Note: an access policy of this Refdesk server hid some libraries from your results. If the library you need is missing, ask the operator for access.';

/** The whole listing, with how to pick a result and what to call next. */
export function formatLibraryListing(libraryName: string, result: LibrarySearchResult): string {
  const note = result.searchFilterApplied ? `\n\n${FILTER_NOTE}` : '';
  if (result.results.length === 0) {
    return (
      `No library on this Refdesk server matches "${libraryName}". Try another spelling or a shorter name (for example the package name without its scope). ` +
      `This server only knows the libraries its operator added; if the library is missing, tell the user it has to be added to Refdesk (refdesk add, or the admin API).` +
      note
    );
  }
  const head =
    `Libraries matching "${libraryName}", best match first. Pick the one whose title and description fit the question ` +
    `(prefer more code snippets and higher trust when several fit), then call query-docs with its Library ID.`;
  return [head + note, ...result.results.map(entry)].join('\n\n----------\n\n');
}
