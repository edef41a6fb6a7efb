/**
 * A repository's stars (and owner kind, home page, description) from its hosting platform's API:
 * GitHub `GET {api}/repos/{owner}/{repo}` (`stargazers_count`), GitLab
 * `GET {api}/projects/{url-encoded path}` (`star_count`). Bitbucket and plain git servers have
 * none. One request through the kernel's guarded Fetch with a short time limit; any failure gives
 * null (the caller keeps the library's stars as they were). The token is sent only to the API of
 * the repository's own platform as `Authorization: Bearer` (GitLab accepts personal access tokens
 * so too), which the guarded Fetch drops on a redirect to another origin; it never appears in a
 * log line or an error.
 */
import type { Fetch, LibraryMeta } from '../../core/contracts.ts';
import type { GitUrl } from './git-url.ts';

export interface RepoStatsOptions {
  /** GitHub's API base URL; '' means https://api.github.com, used for github.com repositories only. */
  githubApiUrl: string;
  /** GitLab's API base URL; '' means https://<the repository's host>/api/v4. */
  gitlabApiUrl: string;
  /** Time limit of the request, in milliseconds; 0 turns the lookup off. */
  timeoutMs: number;
}

interface ApiRequest {
  url: string;
  headers: Record<string, string>;
  read(body: Record<string, unknown>): Pick<LibraryMeta, 'stars' | 'official' | 'homepage' | 'description'>;
}

const base = (u: string) => u.replace(/\/+$/, '');
const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);

/** The API request that tells a repository's stars, or null when its platform has no such API. */
export function repoStatsRequest(url: GitUrl, token: string | undefined, options: RepoStatsOptions): ApiRequest | null {
  if (url.transport === 'file' || options.timeoutMs <= 0) return null;
  const path = url.path.replace(/^\/+/, '').replace(/\.git$/, '');
  if (url.provider === 'github') {
    const parts = path.split('/');
    if (parts.length !== 2 || parts.some((p) => !/^[A-Za-z0-9._-]+$/.test(p))) return null;
    // The public API only knows github.com repositories; an Enterprise host needs the operator's URL.
    if (!options.githubApiUrl && url.host !== 'github.com' && url.host !== 'www.github.com') return null;
    const api = base(options.githubApiUrl || 'https://api.github.com');
    return {
      url: `${api}/repos/${parts.map(encodeURIComponent).join('/')}`,
      headers: { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      read: (b) => ({
        stars: typeof b.stargazers_count === 'number' ? b.stargazers_count : undefined,
        official: (b.owner as { type?: unknown } | undefined)?.type === 'Organization' || undefined,
        homepage: text(b.homepage),
        description: text(b.description),
      }),
    };
  }
  if (url.provider === 'gitlab') {
    if (!path || !url.host) return null;
    const api = base(options.gitlabApiUrl || `https://${url.host}${url.port ? `:${url.port}` : ''}/api/v4`);
    return {
      url: `${api}/projects/${encodeURIComponent(path)}`,
      headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      read: (b) => ({
        stars: typeof b.star_count === 'number' ? b.star_count : undefined,
        official: (b.namespace as { kind?: unknown } | undefined)?.kind === 'group' || undefined,
        homepage: text(b.web_url),
        description: text(b.description),
      }),
    };
  }
  return null;
}

/** Asks the platform; null on any failure (reason given to `debug`, without the token). */
export async function fetchRepoStats(
  fetch: Fetch,
  url: GitUrl,
  token: string | undefined,
  options: RepoStatsOptions,
  signal: AbortSignal,
  debug: (message: string) => void,
): Promise<Pick<LibraryMeta, 'stars' | 'official' | 'homepage' | 'description'> | null> {
  const req = repoStatsRequest(url, token, options);
  if (!req) return null;
  const redact = (s: string) => (token ? s.split(token).join('[token]') : s);
  try {
    const res = await fetch.fetch(req.url, { headers: req.headers, signal, timeoutMs: options.timeoutMs, redirect: 'follow' });
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      debug(`stars of ${url.display}: the ${url.provider} API answered HTTP ${res.status}`);
      return null;
    }
    const body = (await res.json()) as unknown;
    if (!body || typeof body !== 'object') return null;
    const stats = req.read(body as Record<string, unknown>);
    return stats.stars === undefined ? null : stats;
  } catch (e) {
    debug(redact(`stars of ${url.display}: the ${url.provider} API did not answer (${(e as Error).message})`));
    return null;
  }
}
