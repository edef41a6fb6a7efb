/**
 * What `refdesk add <target>` means: a local folder, file or archive (the upload source), a
 * package (`npm:zod`, `pypi:requests`, `packages:name`), or a URL, whose kind is the loaded
 * source whose `matchUrl` scores it highest (SourceDefinition.matchUrl: git hosts and `.git`,
 * `llms.txt`, OpenAPI/Swagger documents, Confluence sites, and the website as the generic
 * fallback, each by its own plugin's declaration). `--source <kind>` overrides the guess. Secrets
 * come from environment variables only (never argv, which other users of the machine can read).
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { RefdeskError } from '../core/errors.ts';
import { gitRepositoryUrl } from '../core/git-url.ts';
import { slugifyLibraryName } from '../core/library-id.ts';
import type { SourceDefinition } from '../core/define.ts';
import { loadConfig } from '../core/config.ts';

/** What the URL guess reads of a source definition. */
export type UrlMatcher = Pick<SourceDefinition, 'kind' | 'matchUrl'>;

export interface AddTarget {
  source: string;
  spec: Record<string, unknown>;
  /** A library name under the source's prefix (uploads), when not derived from the spec. */
  name?: string;
  /** A full library ID, when the user gave one. */
  id?: string;
}

export interface AddTargetOptions {
  source?: string;
  name?: string;
  id?: string;
  branch?: string;
  space?: string;
  email?: string;
  /** `--spec`: the source's spec as JSON, or `@file` holding it (for secret fields: keep them off argv). */
  spec?: string;
  env: NodeJS.ProcessEnv;
  /** Reads `--spec @file` (default: the file system). */
  readFile?: (path: string) => string;
  /** The loaded sources whose URL matches guess a URL's kind (needed for a URL without `--source`). */
  sources?: readonly UrlMatcher[];
}

/** The kind of the source that scores the URL highest (the first in config order on a tie); null when none takes it. */
export function guessUrlSource(url: URL, sources: readonly UrlMatcher[]): string | null {
  let best: { kind: string; score: number } | null = null;
  for (const s of sources) {
    const m = s.matchUrl?.(url);
    const score = m === true ? 1 : typeof m === 'number' && Number.isFinite(m) ? m : 0;
    if (score > 0 && (!best || score > best.score)) best = { kind: s.kind, score };
  }
  return best?.kind ?? null;
}

/** Whether `refdesk add <target>` was given a URL (`scheme://...`), whose kind is guessed without `--source`. */
export const isUrlTarget = (target: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(target);

/** The source definitions of a config file (its plugins loaded, nothing created): what `refdesk add <url>` guesses among. */
export async function configSources(configFile: string): Promise<SourceDefinition[]> {
  const loaded = await loadConfig(configFile);
  return [...loaded.definitions.get('source')!.values()].map((d) => d.def as SourceDefinition);
}

/**
 * `refdesk add --source <kind> --spec '<json>'` (or `--spec @spec.json`): any source, its spec
 * given as is (validated against the kind's specSchema where it is added).
 */
export function specAddTarget(opts: AddTargetOptions & { spec: string }): AddTarget {
  if (!opts.source) throw new RefdeskError('invalid_request', 'add --spec: name the source kind with --source <kind> (GET /api/sources lists them).');
  let text = opts.spec;
  if (text.startsWith('@')) {
    const file = text.slice(1);
    try {
      text = (opts.readFile ?? ((p: string) => readFileSync(p, 'utf8')))(file);
    } catch (e) {
      throw new RefdeskError('invalid_request', `add --spec @${file.slice(0, 200)}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}).`);
    }
  }
  let spec: unknown;
  try {
    spec = JSON.parse(text);
  } catch (e) {
    throw new RefdeskError('invalid_request', `add --spec: not valid JSON (${(e as Error).message.split('\n')[0].slice(0, 120)}); give the spec as a JSON object, e.g. --spec '{"url": "https://example.com"}'.`);
  }
  if (!spec || typeof spec !== 'object' || Array.isArray(spec)) throw new RefdeskError('invalid_request', 'add --spec: the spec must be a JSON object of the source\'s parameters.');
  return { source: opts.source, spec: spec as Record<string, unknown>, ...(opts.id ? { id: opts.id } : {}), ...(opts.name ? { name: opts.name } : {}) };
}

export function resolveAddTarget(target: string, opts: AddTargetOptions): AddTarget {
  if (opts.spec !== undefined) {
    if (target) throw new RefdeskError('invalid_request', 'add --spec: give the spec or a target, not both.');
    return specAddTarget({ ...opts, spec: opts.spec });
  }
  if (!target) throw new RefdeskError('invalid_request', 'add: give a folder, a file, an archive, a URL or npm:/pypi:<package>.');
  const pkg = /^(npm|pypi|packages):(.+)$/.exec(target);
  let source = opts.source;
  let url: URL | null = null;
  if (!pkg && isUrlTarget(target)) {
    try {
      url = new URL(target);
    } catch {
      throw new RefdeskError('invalid_request', `add: "${target.slice(0, 80)}" is not a valid URL.`);
    }
  }
  const scpLike = !pkg && !url && /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!\/\/)./.test(target) && !existsSync(resolve(target));
  if (!source) {
    if (pkg) source = pkg[1];
    else if (url) source = guessUrlSource(url, opts.sources ?? []) ?? undefined;
    else if (scpLike) source = 'git';
    else source = 'upload';
  }
  if (url && url.protocol !== 'http:' && url.protocol !== 'https:') {
    const gitScheme = source === 'git' && ['ssh:', 'git+ssh:', 'file:'].includes(url.protocol);
    if (!gitScheme) {
      throw new RefdeskError(
        'invalid_request',
        url.protocol === 'file:'
          ? `add: file:// URLs are not fetched; give the local path itself (refdesk add ${decodeURIComponent(url.pathname).slice(0, 200)}) to index that folder, file or archive.`
          : `add: "${url.protocol.slice(0, -1).slice(0, 20)}" URLs are not supported; give an http(s) URL, a local path, npm:/pypi:<package>, or a git repository URL (https, ssh or git@host:owner/repo).`,
      );
    }
  }
  if (!source) {
    const kinds = (opts.sources ?? []).map((s) => s.kind);
    throw new RefdeskError('invalid_request', `add: no source of this server's config recognises ${url!.host.slice(0, 80) || 'this URL'}; name one with --source <kind> (sources: ${kinds.join(', ') || 'none'}).`);
  }
  const base = { ...(opts.id ? { id: opts.id } : {}), ...(opts.name ? { name: opts.name } : {}) };
  switch (source) {
    case 'upload': {
      const path = resolve(target);
      if (!existsSync(path)) throw new RefdeskError('invalid_source', `add: ${target} does not exist (give a folder, a file, an archive, a URL or npm:/pypi:<package>).`);
      return { source, spec: { path }, name: opts.name ?? slugifyLibraryName(basename(path).replace(/\.(zip|tar\.gz|tgz|md|mdx|txt)$/i, '')), ...(opts.id ? { id: opts.id } : {}) };
    }
    case 'npm':
    case 'pypi':
    case 'packages':
      return { source, spec: { name: pkg ? pkg[2] : target }, ...base };
    case 'git': {
      gitRepositoryUrl(target); // refused here, before anything is sent, when it is not a repository
      const token = opts.env.REFDESK_GIT_TOKEN;
      return { source, spec: { url: target, ...(opts.branch ? { branch: opts.branch } : {}), ...(token ? { token } : {}) }, ...base };
    }
    case 'confluence': {
      if (!url) throw new RefdeskError('invalid_request', 'add --source confluence: give the site URL, e.g. https://acme.atlassian.net.');
      if (!opts.space) throw new RefdeskError('invalid_request', 'add --source confluence: give the space key with --space KEY.');
      const spec: Record<string, unknown> = { siteUrl: url.origin, spaceKey: opts.space };
      if (opts.env.CONFLUENCE_PAT) spec.personalAccessToken = opts.env.CONFLUENCE_PAT;
      if (opts.env.CONFLUENCE_API_TOKEN) spec.apiToken = opts.env.CONFLUENCE_API_TOKEN;
      if (opts.email) spec.email = opts.email;
      return { source, spec, ...base };
    }
    default:
      if (!url) throw new RefdeskError('invalid_request', `add --source ${source}: give a URL.`);
      return { source, spec: { url: target }, ...base };
  }
}
