/**
 * The add endpoints' JSON bodies (Context7's field names) mapped to source specs (Refdesk's
 * agreed spec fields). Fields Context7 clients may send that Refdesk does not use are accepted
 * and ignored; any other field is refused.
 */
import { RefdeskError } from '../../core/errors.ts';
import { parseGitRepoUrl } from '../../core/git-url.ts';
import { objectBody, onlyFields, optionalString, requiredString, type Params } from './params.ts';

export const ADD_ROUTES = ['repo/github', 'repo/gitlab', 'repo/bitbucket', 'repo/git', 'openapi', 'llmstxt', 'website', 'confluence'] as const;
export type AddRoute = (typeof ADD_ROUTES)[number];

export interface AddRequest {
  /** The source kind that ingests it. */
  kind: 'git' | 'openapi' | 'llmstxt' | 'website' | 'confluence';
  spec: Record<string, unknown>;
  title?: string;
  description?: string;
}

const PROVIDER_HOSTS: Record<string, string> = { github: 'github.com', gitlab: 'gitlab.com', bitbucket: 'bitbucket.org' };

function httpUrl(params: Params, name: string): string {
  const v = requiredString(params, name, 2000);
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new RefdeskError('invalid_request', `Parameter "${name}" must be an absolute http(s) URL.`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new RefdeskError('invalid_request', `Parameter "${name}" must be an http or https URL.`);
  if (u.username || u.password) throw new RefdeskError('invalid_request', `Parameter "${name}" must not contain credentials; send a token in its own field.`);
  return v;
}

/** The docsRepoUrl of a repo route; repo/git records the provider its host is (a github.com URL there is still GitHub). */
function repoUrl(params: Params, provider: string): { url: string; provider: string } {
  const v = requiredString(params, 'docsRepoUrl', 2000);
  if (/^[^@\s/]+@[^:\s/]+:.+/.test(v) && provider === 'git') {
    return { url: v, provider: parseGitRepoUrl(v).url.provider }; // scp-like ssh
  }
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new RefdeskError('invalid_request', 'Parameter "docsRepoUrl" must be a repository URL (https://host/owner/repo).');
  }
  const schemes = provider === 'git' ? ['https:', 'http:', 'ssh:', 'file:'] : ['https:'];
  if (!schemes.includes(u.protocol)) throw new RefdeskError('invalid_request', `Parameter "docsRepoUrl" must use ${schemes.map((s) => s.slice(0, -1)).join(', ')}.`);
  if (u.username || u.password) throw new RefdeskError('invalid_request', 'Parameter "docsRepoUrl" must not contain credentials; send the token as "gitToken".');
  const host = PROVIDER_HOSTS[provider];
  if (host && u.hostname.toLowerCase() !== host && u.hostname.toLowerCase() !== `www.${host}`) {
    throw new RefdeskError('invalid_request', `Parameter "docsRepoUrl" must be a ${host} URL for this endpoint; use /api/v2/add/repo/git for other hosts.`);
  }
  if (u.protocol !== 'file:' && u.pathname.split('/').filter(Boolean).length < 2) {
    throw new RefdeskError('invalid_request', 'Parameter "docsRepoUrl" must name a repository: https://host/owner/repo.');
  }
  // The one parser of repository URLs: refuses pages that are not the repository, bad refs, etc.
  const ref = parseGitRepoUrl(v, provider === 'git' ? undefined : provider);
  return { url: v, provider: ref.url.provider };
}

/** Validates an add body for a route and maps it to a source kind and spec. */
export function parseAddRequest(route: AddRoute, rawBody: unknown): AddRequest {
  const body = objectBody(rawBody);
  // The library's title when the user gives one; else the source's own name for the project.
  const title = optionalString(body, 'libraryTitle', 200)?.trim() || undefined;
  const withTitle = (req: AddRequest): AddRequest => (title && !req.title ? { ...req, title } : req);
  if (route.startsWith('repo/')) {
    const provider = route.slice('repo/'.length);
    onlyFields(body, ['docsRepoUrl', 'gitToken', 'branch', 'private', 'skipVersionFiltering', 'generateDocs', 'libraryTitle']);
    const repo = repoUrl(body, provider);
    const token = optionalString(body, 'gitToken', 1000);
    const branch = optionalString(body, 'branch', 250);
    if (branch !== undefined && !/^[A-Za-z0-9._\/-]+$/.test(branch)) throw new RefdeskError('invalid_request', 'Parameter "branch" may contain only letters, digits, ".", "_", "-" and "/".');
    return withTitle({ kind: 'git', spec: { url: repo.url, provider: repo.provider, ...(branch ? { branch } : {}), ...(token ? { token } : {}) } });
  }
  switch (route) {
    case 'openapi':
      onlyFields(body, ['openApiUrl', 'libraryTitle']);
      return withTitle({ kind: 'openapi', spec: { url: httpUrl(body, 'openApiUrl') } });
    case 'llmstxt':
      onlyFields(body, ['llmstxtUrl', 'libraryTitle']);
      return withTitle({ kind: 'llmstxt', spec: { url: httpUrl(body, 'llmstxtUrl') } });
    case 'website':
      onlyFields(body, ['websiteUrl', 'websiteBaseUrl', 'libraryTitle']);
      return withTitle({ kind: 'website', spec: { url: httpUrl(body, 'websiteUrl') } });
    case 'confluence': {
      onlyFields(body, ['siteUrl', 'spaceKey', 'rootPageId', 'deployment', 'email', 'apiToken', 'personalAccessToken', 'cloudId', 'spaceName', 'pageIds', 'title', 'description', 'projectId', 'libraryTitle']);
      const siteUrl = httpUrl(body, 'siteUrl');
      const spaceKey = requiredString(body, 'spaceKey', 255);
      if (!/^[A-Za-z0-9~_-]+$/.test(spaceKey)) throw new RefdeskError('invalid_request', 'Parameter "spaceKey" may contain only letters, digits, "~", "_" and "-".');
      const spec: Record<string, unknown> = { siteUrl, spaceKey };
      for (const k of ['rootPageId', 'email', 'apiToken', 'personalAccessToken'] as const) {
        const v = optionalString(body, k, 1000);
        if (v !== undefined) spec[k] = v;
      }
      const deployment = optionalString(body, 'deployment', 10);
      if (deployment !== undefined) {
        if (deployment !== 'cloud' && deployment !== 'server') throw new RefdeskError('invalid_request', 'Parameter "deployment" must be "cloud" or "server".');
        spec.deployment = deployment;
      }
      return withTitle({ kind: 'confluence', spec, title: optionalString(body, 'title', 200) ?? optionalString(body, 'spaceName', 200), description: optionalString(body, 'description', 2000) });
    }
    default:
      throw new RefdeskError('invalid_request', `Unknown add endpoint "${String(route)}".`);
  }
}
