/**
 * Repository URLs: which transport, which host, which provider, and the `/owner/repo` ID they
 * give. Credentials in a URL are refused (a token has its own spec field) and nothing here ever
 * echoes more of a URL than its host and path.
 */
import { RefdeskError } from '../../core/errors.ts';

export type GitProvider = 'github' | 'gitlab' | 'bitbucket' | 'git';
export type GitTransport = 'https' | 'http' | 'ssh' | 'file';

export interface GitUrl {
  transport: GitTransport;
  /** Lower-case host name ('' for file URLs). */
  host: string;
  /** Port when given in the URL, else ''. */
  port: string;
  /** Path inside the host (or the absolute file path), without a trailing slash. */
  path: string;
  /** The URL handed to git: credentials never appear in it. */
  cloneUrl: string;
  /** `host/path` (or the file path), safe to show in logs and errors. */
  display: string;
  provider: GitProvider;
}

const HOST = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$|^\[[0-9a-f:.]+\]$/i;
const SCP_LIKE = /^([A-Za-z0-9._-]+@)?([A-Za-z0-9.-]+):(?!\/\/)(.+)$/;

function invalid(reason: string): never {
  throw new RefdeskError('invalid_request', `Invalid git URL: ${reason}. Use https://host/owner/repo(.git), ssh://git@host/owner/repo.git, git@host:owner/repo.git or file:///path/to/repo.`);
}

/** The provider a host most likely is; `given` (from the spec) wins. */
export function detectProvider(host: string, given?: unknown): GitProvider {
  if (given === 'github' || given === 'gitlab' || given === 'bitbucket' || given === 'git') return given;
  if (host === 'github.com' || host.endsWith('.github.com')) return 'github';
  if (host === 'bitbucket.org') return 'bitbucket';
  if (host === 'gitlab.com' || host.startsWith('gitlab.')) return 'gitlab';
  return 'git';
}

function cleanPath(p: string): string {
  const path = p.replace(/\/+$/, '');
  if (path.split('/').some((s) => s === '..' || s === '.')) invalid("its path contains a '.' or '..' segment");
  if (/[\0-\x1f\x7f]/.test(path)) invalid('its path contains a control character');
  return path;
}

/** Parses a repository URL given by a user. Throws `invalid_request` for anything else. */
export function parseGitUrl(raw: unknown, provider?: unknown): GitUrl {
  if (typeof raw !== 'string' || raw.trim() === '') invalid('it is empty');
  const text = (raw as string).trim();
  if (text.startsWith('-')) invalid("it must not start with '-'");
  if (/\s/.test(text)) invalid('it contains whitespace');
  if (/[/:]\.\.?(\/|$)/.test(text)) invalid("its path contains a '.' or '..' segment");

  const scp = !/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? SCP_LIKE.exec(text) : null;
  if (scp) {
    const host = scp[2].toLowerCase();
    if (!HOST.test(host)) invalid('its host name is not valid');
    const path = cleanPath(scp[3].replace(/^\/+/, ''));
    if (path === '') invalid('it names no repository path');
    const user = scp[1] ?? '';
    return {
      transport: 'ssh',
      host,
      port: '',
      path,
      cloneUrl: `${user}${host}:${path}`,
      display: `${host}:${path}`,
      provider: detectProvider(host, provider),
    };
  }

  let url: URL;
  try {
    url = new URL(text);
  } catch {
    invalid('it is not an absolute URL');
  }
  const scheme = url.protocol.replace(':', '');
  if (scheme === 'file') {
    if (url.host !== '') invalid('a file URL must be file:///absolute/path');
    const path = cleanPath(decodeURIComponent(url.pathname));
    if (path === '') invalid('it names no repository path');
    return { transport: 'file', host: '', port: '', path, cloneUrl: `file://${path}`, display: path, provider: detectProvider('', provider) };
  }
  if (scheme !== 'https' && scheme !== 'http' && scheme !== 'ssh' && scheme !== 'git+ssh') {
    invalid(`the scheme "${scheme}" is not supported`);
  }
  if (url.password || (url.username && scheme !== 'ssh' && scheme !== 'git+ssh')) {
    throw new RefdeskError('invalid_request', 'Credentials in a git URL are refused: remove them from the URL and give the token in the "token" field.');
  }
  if (url.password) invalid('an ssh URL must not carry a password');
  if (url.search || url.hash) invalid('it must not have a query string or a fragment');
  const host = url.hostname.toLowerCase();
  if (!HOST.test(host)) invalid('its host name is not valid');
  const path = cleanPath(decodeURIComponent(url.pathname).replace(/^\/+/, ''));
  if (path === '') invalid('it names no repository path');
  const transport: GitTransport = scheme === 'git+ssh' ? 'ssh' : (scheme as GitTransport);
  const user = transport === 'ssh' && url.username ? `${url.username}@` : '';
  const hostPort = url.port ? `${url.hostname}:${url.port}` : url.hostname;
  return {
    transport,
    host,
    port: url.port,
    path,
    cloneUrl: `${transport}://${user}${hostPort}/${url.pathname.replace(/^\/+/, '').replace(/\/+$/, '')}`,
    display: `${hostPort}/${path}`,
    provider: detectProvider(host, provider),
  };
}

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/**
 * `/owner/repo` from the URL path: `.git` stripped, the last two segments (GitLab subgroups
 * `group/sub/repo` give `/sub/repo`). Throws `invalid_request` when they do not make an ID.
 */
export function deriveGitLibraryId(spec: Record<string, unknown>): string {
  const url = parseGitUrl(spec.url, spec.provider);
  const segs = url.path.replace(/\.git$/, '').split('/').filter((s) => s !== '');
  if (segs.length < 2) {
    throw new RefdeskError('invalid_request', `The git URL ${url.display} has no owner/repo path to name the library by; give the library ID (/owner/repo) yourself.`);
  }
  const [owner, repo] = segs.slice(-2);
  for (const s of [owner, repo]) {
    if (!SEGMENT.test(s) || s.length > 100) {
      throw new RefdeskError('invalid_request', `The git URL's path segment "${s.slice(0, 40)}" cannot be part of a library ID (letters, digits, '.', '_', '-'); give the library ID (/owner/repo) yourself.`);
    }
  }
  return `/${owner}/${repo}`;
}

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
