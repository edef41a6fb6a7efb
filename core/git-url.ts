/**
 * Repository URLs, for the kernel, the server and the git source alike: which transport, host
 * and provider a URL names, the library ID it gives, and the branch and folder of web-page forms
 * (`.../tree/<ref>/<folder>`). This is the one place that turns a git URL into an ID: the git
 * source's deriveId, the add routes, the CLI and the fallback ID derivation all call it.
 *
 * IDs:
 * - GitHub and Bitbucket: `/owner/repo` (the first two path segments).
 * - GitLab (gitlab.com, hosts named gitlab.*, or provider "gitlab"): the full project path,
 *   subgroups included: `https://gitlab.com/group/sub/project` gives `/group/sub/project`.
 * - Other git servers: the full repository path (`https://git.example.org/tools/widgets` gives
 *   `/tools/widgets`); file:// URLs: the last two segments of the path.
 * - A `.git` suffix and trailing slashes are dropped.
 *
 * Web-page forms set the branch and the folder: GitHub `tree/<ref>/<folder>` and
 * `blob/<ref>/<file>` (the file's folder), Bitbucket `src/<ref>/<folder>`, GitLab
 * `/-/tree/<ref>/<folder>` and `/-/blob/<ref>/<file>`. The ref is the one segment after
 * `tree`/`blob`/`src`: a branch whose name holds a '/' is given in the branch field instead.
 *
 * Credentials in a URL are refused (a token has its own spec field) and nothing here ever echoes
 * more of a URL than its host and path.
 */
import { RefdeskError } from './errors.ts';

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

/** A repository URL as a library: the repository itself, its ID, and the branch and folder a web-page URL names. */
export interface GitRepoRef {
  /** The repository (without any tree/blob part). */
  url: GitUrl;
  /** The repository URL to keep in the spec: the input without the tree/blob part and trailing slashes. */
  repoUrl: string;
  /** The library ID: '/owner/repo', or the full GitLab project path. */
  id: string;
  /** The ref of a `tree/<ref>/...` form. */
  branch?: string;
  /** The folder of a `tree/<ref>/<folder>` form ('' or absent: the whole repository). */
  folder?: string;
}

const HOST = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$|^\[[0-9a-f:.]+\]$/i;
const SCP_LIKE = /^([A-Za-z0-9._-]+@)?([A-Za-z0-9.-]+):(?!\/\/)(.+)$/;
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;
const REF = /^(?!-)(?!.*\.\.)[A-Za-z0-9._+-]+$/;
/** Most segments of a library ID taken from a repository path (GitLab nests subgroups 20 deep). */
export const GIT_ID_MAX_SEGMENTS = 21;

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

function decodePath(p: string): string {
  try {
    return decodeURIComponent(p);
  } catch {
    invalid('its path has a broken percent-encoding');
  }
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
    const path = cleanPath(decodePath(url.pathname));
    if (path === '') invalid('it names no repository path');
    return { transport: 'file', host: '', port: '', path, cloneUrl: `file://${path}`, display: path, provider: detectProvider('', provider) };
  }
  if (scheme !== 'https' && scheme !== 'http' && scheme !== 'ssh' && scheme !== 'git+ssh') {
    invalid(`the scheme "${scheme}" is not supported`);
  }
  if (url.password || (url.username && scheme !== 'ssh' && scheme !== 'git+ssh')) {
    throw new RefdeskError('invalid_request', 'Credentials in a git URL are refused: remove them from the URL and give the token in the "token" field.');
  }
  if (url.search || url.hash) invalid('it must not have a query string or a fragment');
  const host = url.hostname.toLowerCase();
  if (!HOST.test(host)) invalid('its host name is not valid');
  const path = cleanPath(decodePath(url.pathname).replace(/^\/+/, ''));
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

function notRepo(display: string, rest: string[], provider: GitProvider): never {
  const forms: Record<GitProvider, string> = {
    github: 'https://github.com/owner/repo or .../tree/<branch>/<folder>',
    bitbucket: 'https://bitbucket.org/owner/repo or .../src/<branch>/<folder>',
    gitlab: 'https://gitlab.com/group/project or .../-/tree/<branch>/<folder>',
    git: 'the repository URL',
  };
  throw new RefdeskError(
    'invalid_request',
    `The git URL ${display} names a page of the repository ("${rest.slice(0, 2).join('/').slice(0, 40)}"), not the repository: give ${forms[provider]}.`,
  );
}

/**
 * The `ref/folder...` part after `tree`, `blob` or `src`: the ref is one segment; for `blob` the
 * last segment is a file and the folder is its parent.
 */
function refAndFolder(display: string, rest: string[]): { branch: string; folder: string } {
  const [kind, ref, ...path] = rest;
  if (ref === undefined || ref === '') {
    throw new RefdeskError('invalid_request', `The git URL ${display} has "${kind}" without a branch: give .../${kind}/<branch>/<folder>, or the repository URL alone.`);
  }
  if (!REF.test(ref) || ref.length > 200) {
    throw new RefdeskError('invalid_request', `The git URL ${display} names the branch "${ref.slice(0, 40)}", which is not a valid branch name (letters, digits, '.', '_', '+', '-').`);
  }
  const folder = (kind === 'blob' ? path.slice(0, -1) : path).join('/');
  if (folder.length > 500) throw new RefdeskError('invalid_request', `The git URL ${display} names a folder longer than 500 characters.`);
  return { branch: ref, folder };
}

function idFrom(display: string, segs: string[]): string {
  if (segs.length < 2) {
    throw new RefdeskError('invalid_request', `The git URL ${display} has no owner/repo path to name the library by; give the library ID (/owner/repo) yourself.`);
  }
  if (segs.length > GIT_ID_MAX_SEGMENTS) {
    throw new RefdeskError('invalid_request', `The git URL ${display} has ${segs.length} path segments; a library ID takes at most ${GIT_ID_MAX_SEGMENTS}. Give the library ID yourself.`);
  }
  for (const s of segs) {
    if (!SEGMENT.test(s) || s.length > 100) {
      throw new RefdeskError('invalid_request', `The git URL's path segment "${s.slice(0, 40)}" cannot be part of a library ID (letters, digits, '.', '_', '-'); give the library ID (/owner/repo) yourself.`);
    }
  }
  return '/' + segs.join('/');
}

const stripGit = (s: string) => s.replace(/\.git$/i, '');

interface RepoParts {
  url: GitUrl;
  repoUrl: string;
  /** The segments naming the library ('.git' stripped). */
  idSegs: string[];
  branch?: string;
  folder?: string;
}

function repoParts(raw: unknown, provider?: unknown): RepoParts {
  const full = parseGitUrl(raw, provider);
  const text = (raw as string).trim();
  const segs = full.path.split('/').filter((s) => s !== '');
  if (full.transport === 'file') {
    return { url: full, repoUrl: text, idSegs: segs.slice(-2).map(stripGit) };
  }
  let repoSegs: string[];
  let rest: string[] = [];
  switch (full.provider) {
    case 'github':
    case 'bitbucket': {
      repoSegs = segs.slice(0, 2);
      rest = segs.slice(2);
      const pageKinds = full.provider === 'github' ? ['tree', 'blob'] : ['src'];
      if (rest.length > 0 && !pageKinds.includes(rest[0])) notRepo(full.display, rest, full.provider);
      break;
    }
    case 'gitlab': {
      const dash = segs.indexOf('-');
      repoSegs = dash >= 0 ? segs.slice(0, dash) : segs;
      rest = dash >= 0 ? segs.slice(dash + 1) : [];
      if (dash >= 0 && !['tree', 'blob'].includes(rest[0] ?? '')) notRepo(full.display, rest, full.provider);
      break;
    }
    default:
      repoSegs = segs;
  }
  const idSegs = repoSegs.map((s, i) => (i === repoSegs.length - 1 ? stripGit(s) : s));
  if (rest.length === 0) return { url: full, repoUrl: text.replace(/\/+$/, ''), idSegs };
  const { branch, folder } = refAndFolder(full.display, rest);
  // Cut the page part off the URL as the user wrote it (scp-like or URL).
  const scp = !/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? SCP_LIKE.exec(text) : null;
  let repoUrl: string;
  if (scp) {
    repoUrl = `${scp[1] ?? ''}${scp[2]}:${repoSegs.join('/')}`;
  } else {
    const u = new URL(text);
    u.pathname = '/' + repoSegs.join('/');
    repoUrl = u.toString().replace(/\/+$/, '');
  }
  return { url: parseGitUrl(repoUrl, provider), repoUrl, idSegs, branch, ...(folder ? { folder } : {}) };
}

/**
 * The repository a URL names (without any tree/blob part), for cloning: unlike parseGitRepoUrl
 * it does not need the path to make a library ID (`https://host/repo.git` is fine here).
 */
export function gitRepositoryUrl(raw: unknown, provider?: unknown): GitUrl {
  return repoParts(raw, provider).url;
}

/**
 * The repository a URL names, its library ID, and the branch and folder of a web-page form.
 * Throws `invalid_request` (saying what to give instead) for anything that is not a repository.
 */
export function parseGitRepoUrl(raw: unknown, provider?: unknown): GitRepoRef {
  const parts = repoParts(raw, provider);
  const id = idFrom(parts.url.display, parts.idSegs);
  return {
    url: parts.url,
    repoUrl: parts.repoUrl,
    id,
    ...(parts.branch !== undefined ? { branch: parts.branch } : {}),
    ...(parts.folder !== undefined ? { folder: parts.folder } : {}),
  };
}

/**
 * A git spec with a web-page URL turned into the repository URL, its branch and its folder. A
 * branch given both in the URL and in the spec must agree.
 */
export function normalizeGitSpec(spec: Record<string, unknown>): Record<string, unknown> {
  const ref = repoParts(spec.url, spec.provider);
  const out: Record<string, unknown> = { ...spec, url: ref.repoUrl };
  if (ref.branch !== undefined) {
    if (typeof spec.branch === 'string' && spec.branch !== '' && spec.branch !== ref.branch) {
      throw new RefdeskError('invalid_request', `The git URL names the branch "${ref.branch}" but the branch "${spec.branch.slice(0, 60)}" was given too; give one of them.`);
    }
    out.branch = ref.branch;
  }
  if (ref.folder !== undefined) {
    if (typeof spec.folder === 'string' && spec.folder !== '' && spec.folder !== ref.folder) {
      throw new RefdeskError('invalid_request', `The git URL names the folder "${ref.folder.slice(0, 60)}" but the folder "${spec.folder.slice(0, 60)}" was given too; give one of them.`);
    }
    out.folder = ref.folder;
  }
  return out;
}

/** The library ID of a git spec (`url`, optional `provider`). */
export function deriveGitLibraryId(spec: Record<string, unknown>): string {
  return parseGitRepoUrl(spec.url, spec.provider).id;
}

