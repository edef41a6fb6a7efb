/**
 * What `refdesk add <target>` means, read from the config's sources only: a URL's kind is the
 * source whose `matchUrl` scores it highest (git hosts and `.git`, `llms.txt`, OpenAPI/Swagger
 * documents, Confluence sites, the website as the generic fallback); a `<prefix>:<rest>` target
 * is the source declaring that prefix (`npm:zod`); any other target is the source whose
 * `cliTarget.matchTarget` scores it highest (git's `git@host:path`, upload's local paths). The
 * chosen source's `cliTarget` turns the target, its declared flags and environment variables into
 * the spec (SourceDefinition.cliTarget). `--source <kind>` overrides the guess. Secrets come from
 * environment variables only (never argv, which other users of the machine can read).
 */
import { readFileSync } from 'node:fs';
import { RefdeskError } from '../core/errors.ts';
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
  /** The source is added by sending files (SourceDefinition.addPayload 'files'): `spec.path` names them. */
  files?: true;
}

export interface AddTargetOptions {
  source?: string;
  name?: string;
  id?: string;
  /** The values of the flags the loaded sources declare (CliTargetField.flag), by flag name. */
  flags?: Readonly<Record<string, string | undefined>>;
  /** `--spec`: the source's spec as JSON, or `@file` holding it (for secret fields: keep them off argv). */
  spec?: string;
  env: NodeJS.ProcessEnv;
  /** Reads `--spec @file` (default: the file system). */
  readFile?: (path: string) => string;
  /** The loaded sources: their URL matches and CLI forms (SourceDefinition.cliTarget) read the target. */
  sources?: readonly CliSource[];
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

/** What `refdesk add <target>` reads of a source definition. */
export type CliSource = Pick<SourceDefinition, 'kind' | 'matchUrl' | 'cliTarget' | 'addPayload'>;

/** The kind whose declared matchTarget scores a non-URL target highest (the first in config order on a tie). */
function guessTargetSource(target: string, sources: readonly CliSource[]): string | null {
  let best: { kind: string; score: number } | null = null;
  for (const s of sources) {
    const m = s.cliTarget?.matchTarget?.(target);
    const score = m === true ? 1 : typeof m === 'number' && Number.isFinite(m) ? m : 0;
    if (score > 0 && (!best || score > best.score)) best = { kind: s.kind, score };
  }
  return best?.kind ?? null;
}

/**
 * The `--<flag>` options the loaded sources declare for `refdesk add` (CliTargetField.flag), for
 * the command line's parser. A flag the command itself has, or one two sources declare for
 * different spec fields, is the same option: its value goes to whichever source is chosen.
 */
export function declaredAddFlags(sources: readonly CliSource[], taken: readonly string[]): string[] {
  const flags = new Set<string>();
  for (const s of sources) {
    for (const f of s.cliTarget?.fields ?? []) {
      if (!f.flag) continue;
      if (!/^[a-z][a-z0-9-]{0,40}$/.test(f.flag)) throw new RefdeskError('config_error', `source "${s.kind}": its refdesk add flag "--${f.flag.slice(0, 60)}" must be lower-case letters, digits and "-".`);
      if (taken.includes(f.flag)) throw new RefdeskError('config_error', `source "${s.kind}": its refdesk add flag "--${f.flag}" is one of the command's own options; name it otherwise.`);
      flags.add(f.flag);
    }
  }
  return [...flags];
}

export function resolveAddTarget(target: string, opts: AddTargetOptions): AddTarget {
  if (opts.spec !== undefined) {
    if (target) throw new RefdeskError('invalid_request', 'add --spec: give the spec or a target, not both.');
    return specAddTarget({ ...opts, spec: opts.spec });
  }
  if (!target) throw new RefdeskError('invalid_request', 'add: give a folder, a file, an archive, a URL or npm:/pypi:<package>.');
  const sources = opts.sources ?? [];
  // `<prefix>:<rest>`, a prefix a loaded source declares (npm:zod)
  const colon = target.indexOf(':');
  const prefixed = colon > 0 && colon < target.length - 1 ? sources.find((s) => s.cliTarget?.prefixes?.includes(target.slice(0, colon))) : undefined;
  let source = opts.source;
  let url: URL | null = null;
  if (!prefixed && isUrlTarget(target)) {
    try {
      url = new URL(target);
    } catch {
      throw new RefdeskError('invalid_request', `add: "${target.slice(0, 80)}" is not a valid URL.`);
    }
  }
  if (!source) {
    if (prefixed) source = prefixed.kind;
    else if (url) source = guessUrlSource(url, sources) ?? undefined;
    else source = guessTargetSource(target, sources) ?? undefined;
  }
  const def = source ? sources.find((s) => s.kind === source) : undefined;
  if (url && url.protocol !== 'http:' && url.protocol !== 'https:') {
    if (!def?.cliTarget?.urlSchemes?.includes(url.protocol)) {
      throw new RefdeskError(
        'invalid_request',
        url.protocol === 'file:'
          ? `add: file:// URLs are not fetched; give the local path itself (refdesk add ${decodeURIComponent(url.pathname).slice(0, 200)}) to index that folder, file or archive.`
          : `add: "${url.protocol.slice(0, -1).slice(0, 20)}" URLs are not supported; give an http(s) URL, a local path, npm:/pypi:<package>, or a git repository URL (https, ssh or git@host:owner/repo).`,
      );
    }
  }
  if (!source) {
    const kinds = sources.map((s) => s.kind);
    const what = url ? url.host.slice(0, 80) || 'this URL' : `"${target.slice(0, 80)}"`;
    throw new RefdeskError('invalid_request', `add: no source of this server's config recognises ${what}; name one with --source <kind> (sources: ${kinds.join(', ') || 'none'}).`);
  }
  const base = { ...(opts.id ? { id: opts.id } : {}), ...(opts.name ? { name: opts.name } : {}) };
  const cli = def?.cliTarget;
  const values: Record<string, string> = {};
  for (const f of cli?.fields ?? []) {
    const v = (f.flag ? opts.flags?.[f.flag] : undefined) ?? (f.env ? opts.env[f.env] : undefined);
    if (v) values[f.specField] = v;
  }
  const files = def?.addPayload === 'files' ? { files: true as const } : {};
  if (cli?.toSpec) {
    const rest = prefixed && cli.prefixes?.includes(target.slice(0, colon)) ? target.slice(colon + 1) : target;
    const made = cli.toSpec({ kind: source, target, rest, url, values, ...(opts.name ? { name: opts.name } : {}) });
    return { source, spec: made.spec, ...base, ...(made.name ? { name: made.name } : {}), ...files };
  }
  if (!url) throw new RefdeskError('invalid_request', `add --source ${source}: give a URL.`);
  return { source, spec: { url: target, ...values }, ...base, ...files };
}

/**
 * `refdesk add --help`: the add forms of the config's sources, from their declarations (prefixes,
 * URL schemes, whether they take URLs or local paths, flags and secret variables), so a custom
 * source's forms are listed beside the built-in ones.
 */
export function addHelp(sources: readonly (CliSource & Pick<SourceDefinition, 'title' | 'description'>)[]): string {
  const lines = [
    'Usage: refdesk add <target> [--name N] [--id ID] [--title T] [--description D] [--source <kind>] [flags]',
    "       refdesk add --source <kind> --spec '<json>'|@spec.json [--id ID] [--title T]",
    '',
    'The target picks the source (--source <kind> overrides): <prefix>:<name>, a URL (the best',
    'match among the sources below), or another form a source recognises (a local path: upload).',
    'Secrets come from environment variables only, never from flags.',
    '',
    "The config's sources:",
  ];
  for (const s of sources) {
    const forms: string[] = [];
    const cli = s.cliTarget;
    for (const p of cli?.prefixes ?? []) forms.push(`${p}:<name>`);
    if (s.matchUrl) forms.push(['http(s) URLs', ...(cli?.urlSchemes ?? [])].join(', '));
    if (cli?.matchTarget) forms.push('other targets it recognises');
    if (s.addPayload !== 'files') forms.push('--spec');
    lines.push(`  ${s.kind.padEnd(16)} ${(s.title ?? s.description ?? '').split('\n')[0].slice(0, 70)}`);
    if (forms.length) lines.push(`  ${''.padEnd(16)} takes: ${forms.join('; ')}`);
    for (const f of cli?.fields ?? []) {
      const how = [f.flag ? `--${f.flag} <value>` : '', f.env ? `$${f.env}` : ''].filter(Boolean).join(' or ');
      lines.push(`  ${''.padEnd(16)} ${how}: ${f.description ?? f.specField}`);
    }
  }
  return lines.join('\n') + '\n';
}
