/**
 * The git source: a repository (GitHub, GitLab, Bitbucket or any git server over https, ssh, or
 * file:// when allowed) read with the system git, shallow and without blobs first, then only the
 * documentation blobs fetched in one batch. Documents carry their git blob id as hash, so a
 * refresh skips (and does not even download) unchanged documents.
 */
import { createHash } from 'node:crypto';
import type { Fetch, LibraryMeta, Logger, PreviousDocument, Source, SourceContext, SourceDocument } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { DEFAULT_INCLUDE_LIMITS, gatherIncludes, includeWarning, type IncludeFiles } from '../../core/includes/expand.ts';
import type { NetworkPolicy } from '../../core/net/address-policy.ts';
import type { GitCredentials } from '../../core/git-credentials.ts';
import { CONVERTER_VERSION, convertDocument } from './formats/convert.ts';
import type { GitRepo, TreeEntry } from './git-repo.ts';
import { openSession, parseSpec, type GitSession } from './git-session.ts';
import { normalizeGitSpec, parseGitUrl, webUrlFor } from './git-url.ts';
import { CONFIG_FILES, NO_CONFIG, parseRepoConfig, type RepoConfig } from './repo-config.ts';
import { resolveRef } from './resolve-ref.ts';
import { DEFAULT_GIT_OPTIONS, type GitSourceOptions } from './schema.ts';
import { selectDocs, type SourceFormat } from './select.ts';
import { compareVersionsDesc } from './versions.ts';
import { RetryableError } from './retry.ts';
import { markdownMeta } from '../../core/readme-meta.ts';
import { fetchRepoStats } from './repo-stats.ts';

export interface GitSourceDeps {
  policy: NetworkPolicy;
  logger?: Logger;
  /** The kernel's guarded Fetch, for the platform API (stars); without it stars are not asked. */
  fetch?: Fetch;
  /** Tokens from the operator's settings for private repositories on named hosts. */
  credentials?: GitCredentials;
}

/** Versions a repository offers (for the library's `versions`). */
export interface GitVersions {
  defaultBranch: string;
  /** Every tag, newest first. */
  tags: string[];
  /** The tags the repository's config file names in `previousVersions` (may be empty). */
  configured: string[];
}

const PROGRESS_EVERY = 50;

/** `git<converter>:<blob id>`, plus the included files' ids when the page includes others. */
function documentHash(entry: TreeEntry, includes: string[], oidOf: (p: string) => string | undefined): string {
  const base = `git${CONVERTER_VERSION}:${entry.oid}`;
  if (includes.length === 0) return base;
  const h = createHash('sha1');
  for (const p of includes) h.update(`${p}\0${oidOf(p) ?? 'missing'}\n`);
  return `${base}+${h.digest('hex').slice(0, 16)}`;
}

function splitIncludes(meta: Record<string, string> | undefined): string[] {
  return meta?.includes ? meta.includes.split('\n').filter((s) => s !== '') : [];
}

function decodeUtf8(data: Buffer): string | null {
  if (data.includes(0)) return null;
  return data.toString('utf8').replace(/^\uFEFF/, '');
}

export class GitSource implements Source {
  readonly options: GitSourceOptions;

  constructor(
    options: Partial<GitSourceOptions>,
    private readonly deps: GitSourceDeps,
  ) {
    this.options = { ...DEFAULT_GIT_OPTIONS, ...options };
  }

  async *read(ctx: SourceContext): AsyncGenerator<SourceDocument> {
    ctx.signal.throwIfAborted();
    const spec = parseSpec(ctx.spec);
    const session = await openSession(spec, this.options, this.deps.policy, ctx.signal, ctx.log, this.deps.credentials);
    // Asked while the repository is read; awaited (and reported) at the end of the read.
    const stats = this.deps.fetch
      ? fetchRepoStats(this.deps.fetch, session.url, this.statsToken(session), {
          githubApiUrl: this.options.githubApiUrl,
          gitlabApiUrl: this.options.gitlabApiUrl,
          timeoutMs: this.options.statsTimeoutMs,
        }, ctx.signal, (m) => this.deps.logger?.debug(m, { libraryId: ctx.libraryId }))
      : Promise.resolve(null);
    try {
      const readme = yield* this.readSession(session, spec.branch, ctx, spec.folder);
      const found = await stats;
      if (found) {
        const { description, ...rest } = found;
        ctx.setLibraryMeta?.({ ...rest, ...(readme.description ? {} : { description }) });
      }
    } finally {
      await session.close();
    }
  }

  /** The default branch, the tags (newest first) and the tags the repository's config names. */
  async versions(specInput: Record<string, unknown>, signal: AbortSignal = new AbortController().signal): Promise<GitVersions> {
    const spec = parseSpec(specInput);
    const log = (level: 'warn' | 'info' | 'debug' | 'error', message: string) => this.deps.logger?.log(level, message);
    const session = await openSession(spec, this.options, this.deps.policy, signal, log, this.deps.credentials);
    try {
      const refs = await session.retry(() => session.repo.listRefs());
      const tags = [...refs.tags.keys()].sort(compareVersionsDesc);
      const ref = resolveRef(refs, '', spec.branch, session.url.display);
      await session.retry(() => session.repo.clone(ref.kind === 'default' ? '' : ref.name));
      const config = await this.readConfig(session, await session.repo.tree());
      return { defaultBranch: ref.name, tags, configured: config.previousVersions.filter((t) => refs.tags.has(t)) };
    } finally {
      await session.close();
    }
  }

  /**
   * A spec without `provider` for a host the settings name as a self-managed GitHub or GitLab
   * gets that provider, so its web-page URLs (`.../-/tree/<branch>/<folder>`) and library ID are
   * read as that platform's.
   */
  private async withSettingsProvider(spec: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (spec.provider || !this.deps.credentials?.providerFor) return spec;
    let url;
    try {
      url = parseGitUrl(spec.url);
    } catch {
      return spec; // normalizeGitSpec reports the URL's problem
    }
    if (url.transport !== 'https' && url.transport !== 'http') return spec;
    const provider = await this.deps.credentials.providerFor(url);
    return provider ? { ...spec, provider } : spec;
  }

  /**
   * The token for the platform's stars API: the spec's as before; a settings token only where
   * that API is on the host the token was given for (github.com's API, gitlab.com, or a
   * self-managed GitLab's own /api/v4 when no other API URL is configured).
   */
  private statsToken(session: GitSession): string | undefined {
    if (session.tokenFrom !== 'settings') return session.token;
    const { host, provider } = session.url;
    if (host === 'github.com' && !this.options.githubApiUrl) return session.token;
    if (provider === 'gitlab' && !this.options.gitlabApiUrl) return session.token;
    return undefined;
  }

  /**
   * At add time: a web-page URL (`.../tree/<branch>/<folder>`) becomes the repository URL with
   * its branch and folder, and file:// URLs are refused unless the operator allows them.
   */
  async prepare(spec: Record<string, unknown>): Promise<Record<string, unknown>> {
    const out = normalizeGitSpec(await this.withSettingsProvider(spec));
    if (!this.options.allowFileUrls && parseGitUrl(out.url).transport === 'file') {
      throw new RefdeskError('invalid_request', 'file:// repository URLs are turned off on this server (they read its own disk): give an https or ssh repository URL, or upload the folder instead. An operator can allow them with the git source option allowFileUrls.');
    }
    return out;
  }

  /** Reads the documents; returns the title and description it reported (from README / package.json). */
  private async *readSession(session: GitSession, branch: string | undefined, ctx: SourceContext, folder?: string): AsyncGenerator<SourceDocument, LibraryMeta> {
    const { repo, url } = session;
    ctx.progress({ message: `listing refs of ${url.display}` });
    const refs = await session.retry(() => repo.listRefs());
    const ref = resolveRef(refs, ctx.version, branch, url.display);
    const refLabel = ref.kind === 'default' ? `default branch ${ref.name || '(HEAD)'}` : `${ref.kind} ${ref.name}`;
    if (ref.name) ctx.setLibraryMeta?.({ branch: ref.name });

    if (this.sameCommit(ctx.previous, ref.commit)) {
      const committedAt = ctx.previous.values().next().value?.meta.committedAt;
      if (committedAt) ctx.setLibraryMeta?.({ updatedAt: committedAt });
      ctx.log('info', `${url.display} ${refLabel} is still at ${ref.commit.slice(0, 12)}: all ${ctx.previous.size} documents are unchanged`);
      for (const [path, prev] of [...ctx.previous].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        ctx.signal.throwIfAborted();
        yield { path, format: prev.meta.format ?? 'markdown', content: '', unchanged: true, hash: prev.hash, meta: prev.meta };
      }
      return {};
    }

    ctx.log('info', `cloning ${url.display} (${refLabel}, commit ${ref.commit.slice(0, 12)}): shallow, without blobs`);
    ctx.progress({ message: `cloning ${url.display}` });
    await session.retry(() => repo.clone(ref.kind === 'default' ? '' : ref.name));
    const commit = await repo.head();
    const committedAt = await repo.commitDate().catch(() => '');
    if (committedAt) ctx.setLibraryMeta?.({ updatedAt: committedAt });
    const tree = await repo.tree();
    const byPath = new Map(tree.map((e) => [e.path, e]));
    const config = await this.readConfig(session, tree);
    if (config.file) ctx.log('info', `using ${config.file} from the repository${config.rules.length ? ` (${config.rules.length} rules)` : ''}`);
    if (ctx.version === '' && config.previousVersions.length > 0) {
      const known = config.previousVersions.filter((t) => refs.tags.has(t));
      const unknown = config.previousVersions.filter((t) => !refs.tags.has(t));
      if (unknown.length > 0) ctx.log('warn', `previousVersions names tags the repository does not have: ${unknown.slice(0, 10).join(', ')}`);
      if (known.length > 0) ctx.suggestVersions?.(known);
    }

    const selection = selectDocs(
      tree.map((e) => e.path),
      folder ? { ...config, folders: [folder] } : config,
    );
    const skipped = Object.entries(selection.skipped).map(([why, n]) => `${n} (${why})`).join(', ');
    ctx.log('info', `${tree.length} files in the repository, ${selection.files.length} documentation files selected${skipped ? `; skipped ${skipped}` : ''}`);
    if (selection.files.length === 0) {
      throw new RefdeskError(
        'no_documentation',
        `No documentation found in ${url.display} (${refLabel}): no Markdown, MDX, reStructuredText, AsciiDoc, notebook or docs-folder text files${config.file ? ` under the folders chosen by ${config.file}` : ''}.`,
      );
    }
    if (selection.files.length > this.options.maxFiles) {
      throw new RefdeskError('too_large', `The repository ${url.display} has ${selection.files.length} documentation files; this server indexes at most ${this.options.maxFiles} (git source option maxFiles). Add a refdesk.json with "folders" to choose fewer.`);
    }

    ctx.progress({ total: selection.files.length });
    // Which documents changed since the served build (by blob id, includes and converter version).
    const oidOf = (p: string) => byPath.get(p)?.oid;
    const unchanged = new Set<string>();
    for (const f of selection.files) {
      const prev = ctx.previous.get(f.path);
      if (prev && prev.meta.conv === CONVERTER_VERSION && documentHash(byPath.get(f.path)!, splitIncludes(prev.meta), oidOf) === prev.hash) unchanged.add(f.path);
    }
    const toRead = selection.files.filter((f) => !unchanged.has(f.path));
    if (unchanged.size > 0) ctx.log('info', `${unchanged.size} documents unchanged since the last build, ${toRead.length} to read`);

    const budget = { bytes: 0 };
    const texts = await this.readTexts(session, toRead.map((f) => byPath.get(f.path)!), ctx, 'documentation', budget);
    // Include directives name more files: fetch them in one more batch per nesting level.
    const included = new Map(texts);
    const lookup: IncludeFiles = { root: 'repository', exists: (p) => byPath.has(p), text: (p) => included.get(p) };
    const named = await this.projectName(session, tree, texts, ctx);
    const pages = toRead.flatMap((f) => {
      const text = texts.get(f.path);
      return text === undefined ? [] : [{ path: f.path, format: f.format, text }];
    });
    await gatherIncludes(pages, lookup, async (paths) => {
      const got = await this.readTexts(session, paths.map((p) => byPath.get(p)!), ctx, 'included', budget);
      for (const [p, t] of got) included.set(p, t);
    });

    let files = 0;
    let bytes = 0;
    let yielded = 0;
    for (const f of selection.files) {
      ctx.signal.throwIfAborted();
      const entry = byPath.get(f.path)!;
      const prev = ctx.previous.get(f.path);
      if (unchanged.has(f.path) && prev) {
        yielded++;
        yield { path: f.path, format: prev.meta.format ?? 'markdown', content: '', unchanged: true, hash: prev.hash, meta: { ...prev.meta, commit, ...(committedAt ? { committedAt } : {}) } };
        continue;
      }
      const text = texts.get(f.path);
      if (text === undefined) continue;
      const doc = this.convert(f.path, f.format, text, entry, commit, lookup, byPath, ctx);
      if (!doc) continue;
      if (committedAt) doc.meta = { ...doc.meta, committedAt };
      doc.url = webUrlFor(url, ref.name, f.path);
      if (doc.url === undefined) delete doc.url;
      files++;
      bytes += Buffer.byteLength(text);
      yielded++;
      yield doc;
      if (files % PROGRESS_EVERY === 0) ctx.progress({ files, bytes, message: `read ${files} of ${toRead.length} documents` });
    }
    ctx.signal.throwIfAborted();
    if (yielded === 0) {
      throw new RefdeskError('no_documentation', `No documentation found in ${url.display} (${refLabel}): the ${selection.files.length} candidate files could not be read as text (see the job log).`);
    }
    ctx.progress({ files, bytes, message: `read ${files} documents` });
    ctx.log('info', `read ${files} documents (${bytes} bytes)${unchanged.size ? `, ${unchanged.size} unchanged` : ''} from commit ${commit.slice(0, 12)}`);
    return named;
  }

  /**
   * The project's own name: the root README's first H1 and paragraph (when the README was read
   * in this build), else the root package.json's `name` and `description`. Reported through
   * `ctx.setLibraryMeta`; a README left unchanged since the last build leaves the library's
   * title as the last build set it.
   */
  private async projectName(session: GitSession, tree: TreeEntry[], texts: Map<string, string>, ctx: SourceContext): Promise<LibraryMeta> {
    const isReadme = (p: string) => /^readme\.(md|mdx|markdown)$/i.test(p);
    const readme = [...texts.keys()].filter(isReadme).sort()[0];
    const meta: LibraryMeta = readme ? markdownMeta(texts.get(readme)!) : {};
    const readmeUnchanged = !readme && tree.some((e) => isReadme(e.path) && ctx.previous.has(e.path));
    const pkg = tree.find((e) => e.path === 'package.json');
    if (pkg && !readmeUnchanged && (!meta.title || !meta.description)) {
      try {
        await session.retry(() => session.repo.fetchBlobs([pkg.oid]));
        const data = (await session.repo.readBlobs([pkg.oid], 1024 * 1024)).get(pkg.oid);
        const json = JSON.parse(data?.toString('utf8') ?? '') as { name?: unknown; description?: unknown; private?: unknown };
        if (!meta.title && typeof json.name === 'string') meta.title = json.name;
        if (!meta.description && typeof json.description === 'string') meta.description = json.description;
      } catch {
        // Not JSON or not readable: the README (or nothing) names the project.
      }
    }
    if (meta.title || meta.description) ctx.setLibraryMeta?.(meta);
    return meta;
  }

  private convert(
    path: string,
    format: SourceFormat,
    text: string,
    entry: TreeEntry,
    commit: string,
    files: IncludeFiles,
    byPath: Map<string, TreeEntry>,
    ctx: SourceContext,
  ): SourceDocument | null {
    const converted = convertDocument(path, format, text, files, DEFAULT_INCLUDE_LIMITS);
    if (!converted) {
      ctx.log('warn', `skipped ${path}: not a valid ${format} file`, { path });
      return null;
    }
    if (converted.problems.length > 0) ctx.log('warn', includeWarning(path, converted.problems), { path });
    const { used } = converted;
    const meta: Record<string, string> = { commit, conv: CONVERTER_VERSION, format: converted.format };
    if (used.length > 0) meta.includes = used.join('\n');
    const doc: SourceDocument = { path, format: converted.format, content: converted.content, hash: documentHash(entry, used, (p) => byPath.get(p)?.oid), meta };
    if (converted.lineMap) doc.lineMap = converted.lineMap;
    return doc;
  }

  /** True when the served build came from this very commit with this converter. */
  private sameCommit(previous: ReadonlyMap<string, PreviousDocument>, commit: string): boolean {
    if (previous.size === 0) return false;
    for (const prev of previous.values()) if (prev.meta.commit !== commit || prev.meta.conv !== CONVERTER_VERSION) return false;
    return true;
  }

  private async readConfig(session: GitSession, tree: TreeEntry[]): Promise<RepoConfig> {
    for (const name of CONFIG_FILES) {
      const entry = tree.find((e) => e.path === name);
      if (!entry) continue;
      await session.retry(() => session.repo.fetchBlobs([entry.oid]));
      const data = (await session.repo.readBlobs([entry.oid], 1024 * 1024)).get(entry.oid);
      return parseRepoConfig(name, data?.toString('utf8') ?? '');
    }
    return NO_CONFIG;
  }

  /** Fetches (one batch) and decodes the given files; skips binary and oversized files with a warning. */
  private async readTexts(session: GitSession, entries: TreeEntry[], ctx: SourceContext, what: string, budget: { bytes: number }): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (entries.length === 0) return out;
    const repo: GitRepo = session.repo;
    ctx.progress({ message: `fetching ${entries.length} ${what} files` });
    const fetched = await session.retry(() => repo.fetchBlobs(entries.map((e) => e.oid)));
    if (fetched > 0) ctx.log('info', `fetched ${fetched} ${what} files`);
    let blobs: Map<string, Buffer>;
    try {
      blobs = await repo.readBlobs(entries.map((e) => e.oid), this.options.maxBytes);
    } catch (e) {
      if (e instanceof RefdeskError && e.code === 'too_large') {
        throw new RefdeskError('too_large', `The documentation of ${session.url.display} holds more than ${this.options.maxBytes} bytes, this server's limit (git source option maxBytes). Add a refdesk.json with "folders" to choose fewer.`);
      }
      throw e instanceof RetryableError ? e.error : e;
    }
    let total = 0;
    for (const b of blobs.values()) total += b.length;
    budget.bytes += total;
    if (budget.bytes > this.options.maxBytes) {
      throw new RefdeskError('too_large', `The documentation of ${session.url.display} holds more than ${this.options.maxBytes} bytes, this server's limit (git source option maxBytes). Add a refdesk.json with "folders" to choose fewer.`);
    }
    for (const e of entries) {
      const data = blobs.get(e.oid);
      if (!data) {
        ctx.log('warn', `skipped ${e.path}: its content could not be read`, { path: e.path });
        continue;
      }
      if (data.length > this.options.maxFileBytes) {
        ctx.log('warn', `skipped ${e.path}: ${data.length} bytes is over the per-file limit maxFileBytes=${this.options.maxFileBytes}`, { path: e.path });
        continue;
      }
      const text = decodeUtf8(data);
      if (text === null) {
        ctx.log('warn', `skipped ${e.path}: binary content`, { path: e.path });
        continue;
      }
      out.set(e.path, text);
    }
    return out;
  }
}
