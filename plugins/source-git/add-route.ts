/**
 * The git source's Context7-named add routes (POST /api/v2/add/repo/{github,gitlab,bitbucket,git})
 * and how `refdesk add <url>` recognises a repository. Each route's body (`docsRepoUrl`,
 * `gitToken`, `branch`, ...) becomes the spec {url, provider, branch?, token?}; repo/git records
 * the provider its host is (a github.com URL there is still GitHub).
 */
import type { AddRouteBody, AddRouteDeclaration, JsonSchema } from '../../core/define.ts';
import { RefdeskError } from '../../core/errors.ts';
import { parseGitRepoUrl } from '../../core/git-url.ts';

const PROVIDER_HOSTS: Record<string, string> = { github: 'github.com', gitlab: 'gitlab.com', bitbucket: 'bitbucket.org' };

const invalid = (message: string) => new RefdeskError('invalid_request', message);

/** The docsRepoUrl of a repo route, checked for the route's provider. */
function repoUrl(body: AddRouteBody, provider: string): { url: string; provider: string } {
  const v = body.required('docsRepoUrl', 2000);
  if (/^[^@\s/]+@[^:\s/]+:.+/.test(v) && provider === 'git') {
    return { url: v, provider: parseGitRepoUrl(v).url.provider }; // scp-like ssh
  }
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw invalid('Parameter "docsRepoUrl" must be a repository URL (https://host/owner/repo).');
  }
  const schemes = provider === 'git' ? ['https:', 'http:', 'ssh:', 'file:'] : ['https:'];
  if (!schemes.includes(u.protocol)) throw invalid(`Parameter "docsRepoUrl" must use ${schemes.map((s) => s.slice(0, -1)).join(', ')}.`);
  if (u.username || u.password) throw invalid('Parameter "docsRepoUrl" must not contain credentials; send the token as "gitToken".');
  const host = PROVIDER_HOSTS[provider];
  if (host && u.hostname.toLowerCase() !== host && u.hostname.toLowerCase() !== `www.${host}`) {
    throw invalid(`Parameter "docsRepoUrl" must be a ${host} URL for this endpoint; use /api/v2/add/repo/git for other hosts.`);
  }
  if (u.protocol !== 'file:' && u.pathname.split('/').filter(Boolean).length < 2) {
    throw invalid('Parameter "docsRepoUrl" must name a repository: https://host/owner/repo.');
  }
  // The one parser of repository URLs: refuses pages that are not the repository, bad refs, etc.
  const ref = parseGitRepoUrl(v, provider === 'git' ? undefined : provider);
  return { url: v, provider: ref.url.provider };
}

/** The body of every repo route (components.schemas.AddRepoRequest; the server adds `libraryTitle`). */
const REPO_BODY: JsonSchema = {
  type: 'object',
  required: ['docsRepoUrl'],
  properties: {
    docsRepoUrl: { type: 'string', description: 'https URL of the repository (the git endpoint also takes ssh and file URLs).' },
    gitToken: { type: 'string', writeOnly: true, description: 'Access token for a private repository; stored sealed.' },
    branch: { type: 'string' },
    private: { type: 'boolean', description: 'Accepted for Context7 compatibility; a gitToken makes a repository private.' },
    skipVersionFiltering: { type: 'boolean', description: 'Accepted for Context7 compatibility; not used.' },
    generateDocs: { type: 'boolean', description: 'Accepted for Context7 compatibility; not used.' },
  },
};

function repoRoute(provider: string, summary: string): AddRouteDeclaration {
  return {
    path: `repo/${provider}`,
    summary,
    operationId: `addRepo${provider[0].toUpperCase()}${provider.slice(1)}`,
    body: REPO_BODY,
    schemaName: 'AddRepoRequest',
    toSpec(body) {
      const repo = repoUrl(body, provider);
      const token = body.optional('gitToken', 1000);
      const branch = body.optional('branch', 250);
      if (branch !== undefined && !/^[A-Za-z0-9._\/-]+$/.test(branch)) throw invalid('Parameter "branch" may contain only letters, digits, ".", "_", "-" and "/".');
      return { spec: { url: repo.url, provider: repo.provider, ...(branch ? { branch } : {}), ...(token ? { token } : {}) } };
    },
  };
}

export const gitAddRoutes: readonly AddRouteDeclaration[] = [
  repoRoute('github', 'Add a GitHub repository'),
  repoRoute('gitlab', 'Add a GitLab repository'),
  repoRoute('bitbucket', 'Add a Bitbucket repository'),
  repoRoute('git', 'Add a repository from any git host (https, ssh or file URL)'),
];

const GIT_HOSTS = /^(www\.)?(github\.com|gitlab\.com|bitbucket\.org)$/i;

/** `refdesk add <url>`: a GitHub, GitLab or Bitbucket address, or any URL ending in `.git`. */
export function matchGitUrl(url: URL): number | false {
  return GIT_HOSTS.test(url.hostname) || url.pathname.toLowerCase().endsWith('.git') ? 40 : false;
}

/** Public repositories, or private sources when the library has a token. */
export const gitPolicyCategory = {
  categories: ['public_repos', 'private_sources'] as const,
  of: (spec: Record<string, unknown>) => (typeof spec.token === 'string' && spec.token !== '' ? 'private_sources' : 'public_repos') as 'public_repos' | 'private_sources',
};
