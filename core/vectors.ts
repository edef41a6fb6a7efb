/**
 * Vectors per library version (issue 21). When an embedder is configured, each build's snippets
 * are embedded at ingest, after chunking and before the build is finalized, and written beside
 * its index segment:
 *
 *   <dataDir>/vectors/<buildId>/meta.json   model, dimensions, count, index kind, checksum, and the
 *                                           content hash of each snippet's embedded text, in build
 *                                           order (row i is the snippet of seq i)
 *   <dataDir>/vectors/<buildId>/vectors.f32 or index.json   the index (core/vector-index.ts)
 *
 * The directory is written as `<buildId>.partial-*` and renamed when complete: a failed or killed
 * embedding leaves no half-written vectors, and the served version keeps serving. A refresh reuses
 * the vectors of the served build for snippets whose text hash is unchanged (same model and
 * dimension only). Vectors of another model or dimension than the configured embedder's are
 * never used: that version is searched lexically until an `embed` job gives it current vectors.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Embedder, LibraryVectorStore, LibraryVectorStoreHost, LogLevel, Snippet, Store, TransferVectors } from './contracts.ts';
import type { Kernel } from './kernel.ts';
import { RefdeskError } from './errors.ts';
import { ProviderError } from './providers.ts';
import { formatLibraryId } from './library-id.ts';
import { queueJobOnce } from './queue-once.ts';
import { chooseVectorIndex, readVectorRows, writeVectorIndex, type VectorIndexKind } from './vector-index.ts';

/** The kind of a job that embeds a served version (an embedder was turned on or changed). */
export const EMBED_JOB_KIND = 'embed';
export const VECTORS_DIR = 'vectors';
const META_FILE = 'meta.json';
const FORMAT = 1;
/** Characters of a snippet given to the embedder (about 1,000 tokens). */
export const EMBED_TEXT_MAX_CHARS = 4000;
/** Texts handed to the embedder per call from ingest (the plugin batches and parallelises within). */
const EMBED_CHUNK = 512;

export interface BuildVectorsMeta {
  format: number;
  model: string;
  dimensions: number;
  count: number;
  /** Where the rows are: a file index (core/vector-index.ts), or the store's own (BuildStore.buildVectors). */
  index: VectorIndexKind | 'store';
  checksum: string;
  /** sha1 of each row's embedded text, in build order. */
  hashes: string[];
}

/** The text a snippet is embedded by: its heading path, title, description and body. */
export function snippetEmbedText(s: Pick<Snippet, 'breadcrumb' | 'title' | 'description' | 'type' | 'code' | 'content'>): string {
  const parts = [s.breadcrumb.join(' > '), s.title, s.description, s.type === 'code' ? s.code : s.content];
  return parts.filter((p) => p && p.trim()).join('\n').slice(0, EMBED_TEXT_MAX_CHARS);
}

export function textHash(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

export function vectorsDir(dataDir: string): string {
  return join(dataDir, VECTORS_DIR);
}

function buildDir(dataDir: string, buildId: string): string {
  if (!/^[\w-]+$/.test(buildId)) throw new Error(`not a build id: ${JSON.stringify(buildId).slice(0, 60)}`);
  return join(vectorsDir(dataDir), buildId);
}

/**
 * Parsed meta files by path, with the file's identity when read: queries and ETags of a library
 * with vectors ask for its meta on every request, and the meta holds one hash per snippet (about
 * 1 MB for python), so it is parsed again only when the file was replaced (a new embed job
 * writes a new directory). Bounded: the least recently used are dropped.
 */
const metaCache = new Map<string, { stamp: string; meta: BuildVectorsMeta }>();
const META_CACHE_ENTRIES = 64;

/** The vectors' description of a build, or null when it has none (or an unreadable one). */
export async function readBuildVectorsMeta(dataDir: string, buildId: string): Promise<BuildVectorsMeta | null> {
  const file = join(buildDir(dataDir, buildId), META_FILE);
  let stamp: string;
  try {
    const st = await stat(file);
    stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    metaCache.delete(file);
    return null;
  }
  const known = metaCache.get(file);
  if (known && known.stamp === stamp) {
    metaCache.delete(file);
    metaCache.set(file, known);
    return known.meta;
  }
  const meta = await parseBuildVectorsMeta(file);
  if (!meta) {
    metaCache.delete(file);
    return null;
  }
  metaCache.set(file, { stamp, meta });
  if (metaCache.size > META_CACHE_ENTRIES) metaCache.delete(metaCache.keys().next().value!);
  return meta;
}

async function parseBuildVectorsMeta(file: string): Promise<BuildVectorsMeta | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return null;
  }
  try {
    const m = JSON.parse(text) as Partial<BuildVectorsMeta>;
    if (
      m.format !== FORMAT ||
      typeof m.model !== 'string' ||
      !Number.isInteger(m.dimensions) ||
      !Number.isInteger(m.count) ||
      (m.index !== 'flat' && m.index !== 'vectra') ||
      typeof m.checksum !== 'string' ||
      !Array.isArray(m.hashes) ||
      m.hashes.length !== m.count
    ) {
      return null;
    }
    return m as BuildVectorsMeta;
  } catch {
    return null;
  }
}

/** What the vectors of a build need: the store (its own vector index, if any) and the data directory (files otherwise). */
export interface VectorsHost {
  store: Pick<Store, 'buildVectors'>;
  env: { dataDir: string };
}

/**
 * The vectors' description of a build: from the store's own vector index when it has one
 * (BuildStore.buildVectors: pgvector) and holds this build's, else from the files.
 */
export async function buildVectorsMeta(kernel: VectorsHost, buildId: string): Promise<BuildVectorsMeta | null> {
  const stored = await kernel.store.buildVectors?.();
  const m = stored ? await stored.meta(buildId) : null;
  if (m) return { format: FORMAT, index: 'store', ...m };
  return readBuildVectorsMeta(kernel.env.dataDir, buildId);
}

/** Writes a build's vectors: into the store's own vector index when it has one, else to files (writeBuildVectors). */
export async function saveBuildVectors(kernel: VectorsHost, buildId: string, input: { model: string; dimensions: number; hashes: string[]; vectors: Float32Array[] }): Promise<void> {
  const stored = await kernel.store.buildVectors?.();
  if (stored) await stored.write(buildId, input);
  else await writeBuildVectors(kernel.env.dataDir, buildId, input);
}

export function buildVectorsPath(dataDir: string, buildId: string): string {
  return buildDir(dataDir, buildId);
}

/** Writes a build's vectors (replacing any it had) through a partial directory renamed at the end. */
export async function writeBuildVectors(
  dataDir: string,
  buildId: string,
  input: { model: string; dimensions: number; hashes: string[]; vectors: Float32Array[] },
  vectraMaxFloats?: number,
): Promise<BuildVectorsMeta> {
  const final = buildDir(dataDir, buildId);
  const partial = `${final}.partial-${randomBytes(4).toString('hex')}`;
  await mkdir(partial, { recursive: true });
  try {
    const index = chooseVectorIndex(input.vectors.length, input.dimensions, vectraMaxFloats);
    const checksum = await writeVectorIndex(index, partial, input.dimensions, input.vectors);
    const meta: BuildVectorsMeta = { format: FORMAT, model: input.model, dimensions: input.dimensions, count: input.vectors.length, index, checksum, hashes: input.hashes };
    await writeFile(join(partial, META_FILE), JSON.stringify(meta));
    const old = `${final}.old-${randomBytes(4).toString('hex')}`;
    await rename(final, old).catch(() => {});
    await rename(partial, final);
    await rm(old, { recursive: true, force: true });
    return meta;
  } catch (e) {
    await rm(partial, { recursive: true, force: true }).catch(() => {});
    throw e;
  }
}

export async function removeBuildVectors(dataDir: string, buildId: string): Promise<void> {
  await rm(buildDir(dataDir, buildId), { recursive: true, force: true }).catch(() => {});
}

/**
 * Removes vectors of builds no version serves (replaced, deleted, or never finalized) and partial
 * directories left by a crash. Returns the names removed.
 */
export async function removeOrphanVectors(kernel: Kernel): Promise<string[]> {
  let names: string[];
  try {
    names = (await readdir(vectorsDir(kernel.env.dataDir))).filter((name) => name !== LIBRARY_VECTORS_DIR);
  } catch {
    return [];
  }
  // No build vectors at all (no embedder was ever on): the catalog need not be read.
  if (names.length === 0) return [];
  const keep = new Set<string>();
  const { store } = kernel;
  if (store.servedBuildChunkers) for (const served of await store.servedBuildChunkers()) keep.add(served.buildId);
  else {
    for (const library of await store.listLibraries()) {
      for (const v of await store.listVersions(library.id)) if (v.activeBuildId) keep.add(v.activeBuildId);
    }
  }
  const removed: string[] = [];
  for (const name of names) {
    if (keep.has(name)) continue;
    await rm(join(vectorsDir(kernel.env.dataDir), name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/** Whether a build's vectors were made by this embedder (same model; same dimension when it knows its own). */
export function vectorsMatch(meta: Pick<BuildVectorsMeta, 'model' | 'dimensions'>, embedder: Pick<Embedder, 'model' | 'dimensions'>): boolean {
  return meta.model === embedder.model && (!(embedder.dimensions > 0) || meta.dimensions === embedder.dimensions);
}

/** Every row of a build's vectors described by `meta` (from the store's index or the files; checked). */
async function vectorRowsOf(kernel: VectorsHost, buildId: string, meta: BuildVectorsMeta): Promise<Float32Array[]> {
  return meta.index === 'store'
    ? await (await kernel.store.buildVectors!())!.rows(buildId)
    : await readVectorRows(meta.index, buildDir(kernel.env.dataDir, buildId), meta.dimensions, meta.count, meta.checksum);
}

/** The vectors of a build by text hash, when they match the embedder (for reuse on refresh). */
async function reusableVectors(kernel: VectorsHost, buildId: string | null, embedder: Embedder): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  if (!buildId) return out;
  const meta = await buildVectorsMeta(kernel, buildId);
  if (!meta || !vectorsMatch(meta, embedder)) return out;
  try {
    const rows = await vectorRowsOf(kernel, buildId, meta);
    meta.hashes.forEach((h, i) => out.set(h, rows[i]));
  } catch {
    out.clear();
  }
  return out;
}

/**
 * A build's vectors whole (any model), as `refdesk migrate-store` moves them, or null when it has
 * none. Throws when they are damaged (their checksum does not match).
 */
export async function readBuildVectors(kernel: VectorsHost, buildId: string): Promise<TransferVectors | null> {
  const meta = await buildVectorsMeta(kernel, buildId);
  if (!meta) return null;
  const vectors = await vectorRowsOf(kernel, buildId, meta);
  if (vectors.length !== meta.hashes.length) throw new Error(`the vectors of build ${buildId} hold ${vectors.length} rows for ${meta.hashes.length} snippets`);
  return { model: meta.model, dimensions: meta.dimensions, hashes: meta.hashes, vectors };
}

/** Checks what an embedder returned: one finite vector per text, all of one dimension. */
export function checkEmbeddings(vectors: unknown, count: number, dimensions: number | null): Float32Array[] {
  if (!Array.isArray(vectors) || vectors.length !== count) {
    throw new ProviderError('bad_response', `the embedder returned ${Array.isArray(vectors) ? vectors.length : 'no'} vectors for ${count} texts`);
  }
  const dim = dimensions ?? (vectors[0] as Float32Array | undefined)?.length ?? 0;
  for (const v of vectors as Float32Array[]) {
    if (!(v instanceof Float32Array) || v.length === 0 || v.length !== dim) {
      throw new ProviderError('bad_response', `the embedder returned a vector of ${v?.length ?? 0} dimensions where ${dim} were expected`);
    }
    for (let i = 0; i < v.length; i++) if (!Number.isFinite(v[i])) throw new ProviderError('bad_response', 'the embedder returned a vector with a value that is not a number');
  }
  return vectors as Float32Array[];
}

/** The job error for a provider failure while embedding; never holds a key. */
export function embeddingJobError(e: unknown, scrub: (s: string) => string): RefdeskError {
  if (e instanceof ProviderError) {
    if (e.kind === 'auth') {
      return new RefdeskError(
        'build_failed',
        scrub(`The embedding provider refused the key${e.status ? ` (HTTP ${e.status})` : ''}: set a valid embedding API key in Settings (or turn embeddings off); the served version is unchanged.`),
      );
    }
    return new RefdeskError('build_failed', scrub(`Embedding failed (${e.kind}): ${e.message}. The served version is unchanged.`));
  }
  if (e instanceof RefdeskError) return e;
  return new RefdeskError('build_failed', scrub(`Embedding failed: ${(e as Error).message}. The served version is unchanged.`));
}

/** A function that removes the configured provider keys from a text. */
export async function providerKeyScrubber(kernel: Kernel): Promise<(s: string) => string> {
  let keys: string[] = [];
  try {
    const r = await kernel.providers.resolved();
    keys = [r.embedding?.apiKey, r.llm?.apiKey].filter((k): k is string => typeof k === 'string' && k.length >= 4);
  } catch {
    keys = [];
  }
  return (s) => keys.reduce((t, k) => t.split(k).join('[redacted]'), s);
}

type Log = (level: LogLevel, message: string) => void;

export interface EmbedRun {
  signal: AbortSignal;
  log: Log;
  /** Called with how many texts have vectors so far (reused or embedded). */
  progress?(done: number, total: number): void;
}

/**
 * Vectors for these texts: reused from `reuseFrom`'s vectors by text hash, the rest embedded in
 * chunks (the plugin batches and retries each). Throws the embedder's ProviderError.
 */
export async function embedTexts(
  kernel: Kernel,
  embedder: Embedder,
  texts: readonly string[],
  reuseFrom: string | null,
  run: EmbedRun,
): Promise<{ hashes: string[]; vectors: Float32Array[]; dimensions: number; reused: number; embedded: number }> {
  const hashes = texts.map(textHash);
  const previous = await reusableVectors(kernel, reuseFrom, embedder);
  const vectors: Float32Array[] = new Array(texts.length);
  const todo: number[] = [];
  hashes.forEach((h, i) => {
    const v = previous.get(h);
    if (v) vectors[i] = v;
    else todo.push(i);
  });
  const reused = texts.length - todo.length;
  let dimensions: number | null = reused > 0 ? vectors[hashes.findIndex((h) => previous.has(h))].length : embedder.dimensions > 0 ? embedder.dimensions : null;
  run.log('info', `embedding ${texts.length} snippets with ${embedder.model}: ${reused} unchanged (vectors reused), ${todo.length} to embed`);
  let done = reused;
  run.progress?.(done, texts.length);
  for (let at = 0; at < todo.length; at += EMBED_CHUNK) {
    run.signal.throwIfAborted();
    const part = todo.slice(at, at + EMBED_CHUNK);
    const got = checkEmbeddings(await embedder.embed(part.map((i) => texts[i]), 'document'), part.length, dimensions);
    dimensions ??= got[0]?.length ?? null;
    part.forEach((i, j) => (vectors[i] = got[j]));
    done += part.length;
    run.progress?.(done, texts.length);
    if (todo.length > EMBED_CHUNK) run.log('info', `embedded ${done - reused} of ${todo.length} snippets`);
  }
  return { hashes, vectors, dimensions: dimensions ?? 0, reused, embedded: todo.length };
}

/** The configured embedder, or null (none, or the settings cannot be read: logged). */
export async function currentEmbedder(kernel: Kernel): Promise<Embedder | null> {
  if (!kernel.providers) return null;
  try {
    return await kernel.providers.embedder();
  } catch (e) {
    kernel.logger.warn('the embedding settings cannot be read: search stays lexical', { error: (e as Error).message });
    return null;
  }
}

/**
 * The embedding step of an ingest: collects the texts of the build's snippets as they are added
 * (in build order), then embeds them before the build is finalized.
 */
export class IngestVectors {
  private readonly texts: string[] = [];
  private readonly headings = new Set<string>();

  private constructor(
    private readonly kernel: Kernel,
    readonly embedder: Embedder,
  ) {}

  /** Null when no embedder is configured: the build stays lexical, as without this step. */
  static async start(kernel: Kernel): Promise<IngestVectors | null> {
    const embedder = await currentEmbedder(kernel);
    return embedder ? new IngestVectors(kernel, embedder) : null;
  }

  add(snippets: readonly Snippet[]): void {
    for (const s of snippets) {
      this.texts.push(snippetEmbedText(s));
      collectHeadings(this.headings, s);
    }
  }

  /**
   * Embeds and writes the build's vectors (and, for the default version, the library's). Throws
   * the RefdeskError the job fails with: the build is then discarded, the served one untouched.
   */
  async finish(buildId: string, job: { libraryId: string; version: string }, reuseFrom: string | null, run: EmbedRun): Promise<void> {
    const scrub = await providerKeyScrubber(this.kernel);
    try {
      const got = await embedTexts(this.kernel, this.embedder, this.texts, reuseFrom, run);
      await saveBuildVectors(this.kernel, buildId, { model: this.embedder.model, dimensions: got.dimensions, hashes: got.hashes, vectors: got.vectors });
      run.log('info', `vectors written: ${got.vectors.length} x ${got.dimensions} (${this.embedder.model}; ${got.reused} reused, ${got.embedded} embedded)`);
      if (job.version === '') await writeLibraryVector(this.kernel, this.embedder, job.libraryId, [...this.headings], run.log);
    } catch (e) {
      await removeBuildVectors(this.kernel.env.dataDir, buildId);
      await (await this.kernel.store.buildVectors?.())?.remove(buildId).catch(() => {});
      if (run.signal.aborted) throw e;
      throw embeddingJobError(e, scrub);
    }
  }
}

/**
 * Embeds the served build of a job's version (an `embed` job): reuses what vectors it has of the
 * same model, writes the rest. The version keeps being served lexically until this finishes.
 */
export async function embedServedVersion(kernel: Kernel, job: { libraryId: string; version: string }, run: EmbedRun): Promise<{ snippets: number }> {
  const scrub = await providerKeyScrubber(kernel);
  const embedder = await currentEmbedder(kernel);
  const name = formatLibraryId(job.libraryId, job.version);
  if (!embedder) {
    run.log('info', `no embedder is configured any more: ${name} stays lexical`);
    return { snippets: 0 };
  }
  const version = await kernel.store.getVersion(job.libraryId, job.version);
  const buildId = version?.activeBuildId;
  if (!buildId) throw new RefdeskError('version_not_found', `${name} has no served build to embed.`);
  const meta = await buildVectorsMeta(kernel, buildId);
  if (meta && vectorsMatch(meta, embedder)) {
    run.log('info', `${name} already has vectors of ${embedder.model}: nothing to embed`);
    return { snippets: meta.count };
  }
  const snippets = await kernel.store.getSnippets(job.libraryId, job.version);
  try {
    const got = await embedTexts(kernel, embedder, snippets.map(snippetEmbedText), buildId, run);
    const still = await kernel.store.getVersion(job.libraryId, job.version);
    if (still?.activeBuildId !== buildId) {
      run.log('info', `${name} was rebuilt meanwhile (its new build has its own vectors): these are not kept`);
      return { snippets: 0 };
    }
    await saveBuildVectors(kernel, buildId, { model: embedder.model, dimensions: got.dimensions, hashes: got.hashes, vectors: got.vectors });
    run.log('info', `vectors written: ${got.vectors.length} x ${got.dimensions} (${embedder.model}; ${got.reused} reused, ${got.embedded} embedded)`);
    if (job.version === '') {
      const headings = new Set<string>();
      for (const s of snippets) collectHeadings(headings, s);
      await writeLibraryVector(kernel, embedder, job.libraryId, [...headings], run.log);
    }
    return { snippets: snippets.length };
  } catch (e) {
    if (run.signal.aborted) throw e;
    throw embeddingJobError(e, scrub);
  }
}

/**
 * Queues an `embed` job for every served version whose vectors are missing or of another model
 * or dimension than the configured embedder's, unless a job of that version is queued or running.
 * Called when the embedding settings change and when a server starts. Returns the jobs' ids.
 */
export async function queueEmbeddings(kernel: Kernel): Promise<string[]> {
  const embedder = await currentEmbedder(kernel);
  if (!embedder) return [];
  const { store } = kernel;
  const queued: string[] = [];
  for (const library of await store.listLibraries()) {
    const pending = new Set(
      (await store.listJobs({ libraryId: library.id, limit: 1000 })).filter((j) => j.state === 'queued' || j.state === 'running').map((j) => j.version),
    );
    for (const v of await store.listVersions(library.id)) {
      if (!v.activeBuildId || pending.has(v.version)) continue;
      const meta = await buildVectorsMeta(kernel, v.activeBuildId);
      if (meta && vectorsMatch(meta, embedder)) continue;
      // Another node starting now may queue it first: then it is not queued twice.
      const job = await queueJobOnce(store, { libraryId: library.id, version: v.version, kind: EMBED_JOB_KIND });
      if (!job) continue;
      const why = meta ? `its vectors are of ${meta.model} (${meta.dimensions} dimensions)` : 'it has no vectors';
      await store.appendJobLog(job.id, 'info', `queued: embedding ${formatLibraryId(library.id, v.version)} with ${embedder.model} (${why}); until it finishes its search is lexical`);
      queued.push(job.id);
    }
  }
  if (queued.length > 0) kernel.logger.info('the embedder changed: embedding every library', { jobs: queued.length, model: embedder.model });
  return queued;
}

// ---------------------------------------------------------------------------------------------
// Library vectors (library search): one per library, over its title, description and top headings
// ---------------------------------------------------------------------------------------------

const LIBRARY_VECTORS_DIR = 'libraries';
const TOP_HEADINGS = 40;

export interface LibraryVector {
  libraryId: string;
  model: string;
  vector: Float32Array;
}

function collectHeadings(into: Set<string>, s: Pick<Snippet, 'breadcrumb' | 'pageTitle'>): void {
  if (into.size >= TOP_HEADINGS) return;
  const h = (s.breadcrumb.length > 1 ? s.breadcrumb.slice(0, 2).join(' > ') : s.pageTitle || s.breadcrumb[0]) ?? '';
  if (h.trim()) into.add(h.trim().slice(0, 200));
}

function libraryVectorFile(dataDir: string, libraryId: string): string {
  return join(vectorsDir(dataDir), LIBRARY_VECTORS_DIR, `${createHash('sha1').update(libraryId).digest('hex')}.json`);
}

/** The text a library is embedded by. */
export function libraryEmbedText(title: string, description: string, headings: readonly string[]): string {
  return [title, description, headings.join('\n')].filter((p) => p.trim()).join('\n').slice(0, EMBED_TEXT_MAX_CHARS);
}

/** The store's own library vectors (LibraryVectorStore: PostgreSQL), or null (files in the data directory). */
export function sharedLibraryVectors(store: unknown): LibraryVectorStore | null {
  const v = (store as Partial<LibraryVectorStoreHost> | null)?.libraryVectors;
  const methods = ['putLibraryVector', 'getLibraryVectors', 'libraryVectorsTag'] as const;
  return v && methods.every((m) => typeof v[m] === 'function') ? v : null;
}

/** What library vectors need: the store (its own LibraryVectorStore, if any) and the data directory (files otherwise). */
export interface LibraryVectorsHost {
  store: unknown;
  env: { dataDir: string };
}

async function writeLibraryVector(kernel: Kernel, embedder: Embedder, libraryId: string, headings: string[], log: Log): Promise<void> {
  const library = await kernel.store.getLibrary(libraryId);
  if (!library) return;
  const [vector] = checkEmbeddings(await embedder.embed([libraryEmbedText(library.title, library.description, headings)], 'document'), 1, null);
  await putLibraryVector(kernel, { libraryId, model: embedder.model, vector });
  log('info', `library vector written (title, description and ${headings.length} top headings)`);
}

/** Writes a library's vector: into the store when it keeps them (every node then ranks by it), else to a file. */
export async function putLibraryVector(host: LibraryVectorsHost, v: LibraryVector): Promise<void> {
  const shared = sharedLibraryVectors(host.store);
  if (shared) return shared.putLibraryVector(v);
  const file = libraryVectorFile(host.env.dataDir, v.libraryId);
  await mkdir(join(vectorsDir(host.env.dataDir), LIBRARY_VECTORS_DIR), { recursive: true });
  const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, JSON.stringify({ libraryId: v.libraryId, model: v.model, vector: Array.from(v.vector) }));
  await rename(tmp, file);
}

/** The library vectors of these libraries that exist, of any model (from the store when it keeps them, else the files). */
export async function getLibraryVectors(host: LibraryVectorsHost, libraryIds: readonly string[]): Promise<LibraryVector[]> {
  const shared = sharedLibraryVectors(host.store);
  if (shared) return shared.getLibraryVectors(libraryIds);
  const out: LibraryVector[] = [];
  for (const id of libraryIds) {
    try {
      const data = JSON.parse(await readFile(libraryVectorFile(host.env.dataDir, id), 'utf8')) as { libraryId?: unknown; model?: unknown; vector?: unknown };
      if (data.libraryId !== id || typeof data.model !== 'string' || !Array.isArray(data.vector)) continue;
      out.push({ libraryId: id, model: data.model, vector: Float32Array.from(data.vector as number[]) });
    } catch {
      // no vector for this library (not embedded yet): lexical only
    }
  }
  return out;
}

/** The library vectors of these libraries made by this embedder (others are left out). */
export async function readLibraryVectors(host: LibraryVectorsHost, libraryIds: readonly string[], embedder: Pick<Embedder, 'model' | 'dimensions'>): Promise<LibraryVector[]> {
  return (await getLibraryVectors(host, libraryIds)).filter((v) => v.model === embedder.model && !(embedder.dimensions > 0 && v.vector.length !== embedder.dimensions));
}

/**
 * What the vectors add to an answer's ETag (server/api/answer-etag.ts): null without an embedder
 * (the tag stays what it was); else the embedder's fingerprint and, for these builds, the
 * checksums of their vectors, or, for library search (`builds` null), which libraries have
 * vectors. An embed job finishing changes the tag though no build changed.
 */
export async function vectorsTag(kernel: Kernel, builds: ReadonlyArray<string | null> | null): Promise<string | null> {
  const embedder = await currentEmbedder(kernel);
  if (!embedder) return null;
  const parts: string[] = [await kernel.providers.fingerprint()];
  if (builds) {
    for (const b of builds) parts.push(b ? ((await buildVectorsMeta(kernel, b))?.checksum ?? '-') : '-');
  } else {
    const shared = sharedLibraryVectors(kernel.store);
    if (shared) parts.push(await shared.libraryVectorsTag());
    else parts.push(...(await readdir(join(vectorsDir(kernel.env.dataDir), LIBRARY_VECTORS_DIR)).catch(() => [] as string[])).sort());
  }
  return parts.join('\n');
}
