/**
 * A Confluence library spec, checked and turned into what the API clients need: the deployment,
 * the REST and web base URLs, and the Authorization header (kept in memory only).
 */
import { RefdeskError } from '../../core/errors.ts';

export type Deployment = 'cloud' | 'server';

/** A checked spec. `authorization` is a secret: never log it or put it in a message. */
export interface ConfluenceTarget {
  deployment: Deployment;
  spaceKey: string;
  rootPageId?: string;
  /** Scheme, host and port of the site, e.g. `https://acme.atlassian.net`. */
  origin: string;
  /**
   * The base every web and REST path hangs off: `<origin>/wiki` on Cloud, the site URL with its
   * context path (e.g. `https://wiki.example.com/confluence`) on Server/Data Center.
   */
  base: string;
  /** The `Authorization` header value, or null for anonymous access. */
  authorization: string | null;
  /** Which credentials were given, for messages: never the values. */
  authKind: 'basic' | 'bearer' | 'anonymous';
}

function invalid(message: string): never {
  throw new RefdeskError('invalid_source', message);
}

function optionalString(spec: Record<string, unknown>, key: string): string | undefined {
  const v = spec[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') invalid(`Confluence spec "${key}" must be a string.`);
  return v;
}

/** The site URL without credentials, query, fragment or trailing slash. */
export function parseSiteUrl(raw: unknown): URL {
  if (typeof raw !== 'string' || raw.trim() === '') {
    invalid('Confluence spec needs "siteUrl": the address of the site, e.g. https://acme.atlassian.net or https://wiki.example.com/confluence.');
  }
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    invalid('Confluence "siteUrl" is not a valid absolute URL; give e.g. https://acme.atlassian.net.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    invalid(`Confluence "siteUrl" must be an http or https URL (got ${url.protocol.replace(':', '')}).`);
  }
  if (url.username || url.password) {
    invalid('Confluence "siteUrl" must not hold credentials; give them in email + apiToken or personalAccessToken.');
  }
  if (url.search || url.hash) {
    invalid('Confluence "siteUrl" must be the site address only, without a query (?...) or fragment (#...).');
  }
  url.pathname = url.pathname.replace(/\/+$/, '') || '/';
  return url;
}

/** cloud for *.atlassian.net sites, server otherwise. */
export function defaultDeployment(url: URL): Deployment {
  return /(^|\.)atlassian\.net$/i.test(url.hostname) ? 'cloud' : 'server';
}

/** Checks a spec (already valid against the specSchema) and builds the target. */
export function parseConfluenceSpec(spec: Record<string, unknown>): ConfluenceTarget {
  const url = parseSiteUrl(spec.siteUrl);
  const spaceKey = spec.spaceKey;
  if (typeof spaceKey !== 'string' || spaceKey.trim() === '') {
    invalid('Confluence spec needs "spaceKey": the key of the space to read, e.g. ENG.');
  }
  if (/[\s/?#&]/.test(spaceKey)) invalid('Confluence "spaceKey" must not contain spaces, "/", "?", "#" or "&".');
  const rootPageId = optionalString(spec, 'rootPageId');
  if (rootPageId !== undefined && !/^[0-9]{1,20}$/.test(rootPageId)) {
    invalid('Confluence "rootPageId" must be a numeric page ID (the number in the page URL, e.g. .../pages/123456/...).');
  }
  const deploymentRaw = optionalString(spec, 'deployment');
  if (deploymentRaw !== undefined && deploymentRaw !== 'cloud' && deploymentRaw !== 'server') {
    invalid('Confluence "deployment" must be "cloud" or "server".');
  }
  const deployment: Deployment = (deploymentRaw as Deployment | undefined) ?? defaultDeployment(url);

  const email = optionalString(spec, 'email');
  const apiToken = optionalString(spec, 'apiToken');
  const pat = optionalString(spec, 'personalAccessToken');
  if (pat !== undefined && (email !== undefined || apiToken !== undefined)) {
    invalid('Give either email + apiToken (Basic auth) or personalAccessToken (Bearer), not both.');
  }
  if (email !== undefined && apiToken === undefined) {
    invalid('Confluence "email" needs "apiToken" too (create one at https://id.atlassian.com/manage-profile/security/api-tokens for Cloud).');
  }
  if (apiToken !== undefined && email === undefined) {
    invalid('Confluence "apiToken" needs "email" too: the account email (Cloud) or user name (Server/Data Center) it belongs to.');
  }
  if (email !== undefined && email.includes(':')) {
    invalid('Confluence "email" must not contain ":" (Basic auth cannot carry it).');
  }

  const origin = url.origin;
  const path = url.pathname === '/' ? '' : url.pathname;
  const base = deployment === 'cloud' ? `${origin}${path.replace(/\/wiki$/i, '')}/wiki` : `${origin}${path}`;
  let authorization: string | null = null;
  let authKind: ConfluenceTarget['authKind'] = 'anonymous';
  if (pat !== undefined) {
    authorization = `Bearer ${pat}`;
    authKind = 'bearer';
  } else if (email !== undefined && apiToken !== undefined) {
    authorization = `Basic ${Buffer.from(`${email}:${apiToken}`, 'utf8').toString('base64')}`;
    authKind = 'basic';
  }
  return { deployment, spaceKey, ...(rootPageId ? { rootPageId } : {}), origin, base, authorization, authKind };
}

/**
 * `/confluence/<host with . as _>_<space key lower-cased>`; a port is kept as `_<port>`, and
 * characters a library ID cannot hold (the `~` of personal spaces) become `-`.
 */
export function deriveConfluenceId(spec: Record<string, unknown>): string {
  const url = parseSiteUrl(spec.siteUrl);
  const key = spec.spaceKey;
  if (typeof key !== 'string' || key.trim() === '') {
    invalid('Confluence spec needs "spaceKey" to name the library, e.g. ENG.');
  }
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/[.:]/g, '_');
  const port = url.port ? `_${url.port}` : '';
  const space = key.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'space';
  return `/confluence/${`${host}${port}_${space}`.slice(0, 100)}`;
}
