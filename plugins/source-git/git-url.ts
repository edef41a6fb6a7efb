/**
 * Repository URLs: parsing and library IDs live in core/git-url.ts (shared with the server);
 * this module re-exports them for the git source and adds the provider's web page of a file.
 */
export { detectProvider, deriveGitLibraryId, normalizeGitSpec, gitRepositoryUrl, parseGitRepoUrl, parseGitUrl, type GitProvider, type GitRepoRef, type GitTransport, type GitUrl } from '../../core/git-url.ts';
import type { GitUrl } from '../../core/git-url.ts';

/** A web page for a file of the repository, when the provider has a known layout. */
export function webUrlFor(url: GitUrl, ref: string, path: string): string | undefined {
  if (url.transport === 'file' || ref === '') return undefined;
  const repo = url.path.replace(/\.git$/, '');
  const file = path.split('/').map(encodeURIComponent).join('/');
  const r = encodeURIComponent(ref).replace(/%2F/g, '/');
  switch (url.provider) {
    case 'github':
      return `https://${url.host}/${repo}/blob/${r}/${file}`;
    case 'gitlab':
      return `https://${url.host}/${repo}/-/blob/${r}/${file}`;
    case 'bitbucket':
      return `https://${url.host}/${repo}/src/${r}/${file}`;
    default:
      return undefined;
  }
}
