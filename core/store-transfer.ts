/**
 * Moving a deployment between stores (`refdesk migrate-store`, issue 24). Two parts:
 *
 * - `ContractTransfer`: what a StoreTransfer (core/contracts.ts) does through the Store's role
 *   methods, which both stores share: libraries, served versions (rebuilt in the target from
 *   their snippets and document records, so each store writes its own segments), the admin
 *   account, sessions' and audit entries' writes, settings. A store's transfer.ts adds only what
 *   the role methods cannot read or write: aliases, API key hashes, sessions and setting keys to
 *   list, and rows whose ids and times must be kept (library creation, a version's last update,
 *   jobs with their logs, API keys).
 * - Vectors and uploads, whichever way each store keeps them (core/vectors.ts, core/uploads.ts):
 *   a served build's snippet vectors (files beside the data directory, or the store's own index:
 *   pgvector rows or `vector_chunks`) are written to the target's new build as its store keeps
 *   them; library-search vectors likewise (files, or the store's LibraryVectorStore); the raw
 *   upload of a library whose job is still queued or running (named in its spec as
 *   `.../uploads/<uuid>.<ext>`) goes to the target's uploads (its folder, or the store's
 *   UploadStore), so that the job can run there.
 * - `moveStore`: copies every row from one store to another, re-sealing the sealed secrets
 *   (core/secrets.ts) from the source's key to the target's. It refuses a target that holds
 *   anything unless told to replace it, and marks the target while it writes, so a move that
 *   stopped half-way is recognised and replaced by the next `--force` run, never taken as done.
 */
import type {
  ApiKeyRecord,
  AuditEntryInput,
  JobLogLine,
  JobRecord,
  SessionRecord,
  Snippet,
  Store,
  StoreTransfer,
  TransferRow,
} from './contracts.ts';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RefdeskError } from './errors.ts';
import { hasLocalStoredDocs, storedDocsPath } from './stored-docs.ts';
import { isSealed, type SecretBox } from './secrets.ts';
import { rawUploadName, sharedUploads, uploadsDir } from './uploads.ts';
import { getLibraryVectors, putLibraryVector, readBuildVectors, saveBuildVectors } from './vectors.ts';

/** The setting a target carries while `moveStore` writes it (removed by the last write). */
export const TRANSFER_MARKER = 'refdesk.migrate-store.in-progress';

/** Snippets per addSnippets call when a version is written to the target. */
const SNIPPET_BATCH = 500;
/** Audit entries per listAudit page. */
const AUDIT_PAGE = 1000;

export interface AliasRow {
  alias: string;
  target: string;
  createdAt: string;
}

/** A StoreTransfer written over the Store's role methods, with the store's own raw reads and writes. */
export abstract class ContractTransfer implements StoreTransfer {
  /** `dataDir`: the store's data directory (where a build's stored documents file is on this machine). */
  constructor(
    protected readonly store: Store,
    protected readonly dataDir: string,
  ) {}

  protected abstract listAliases(): Promise<AliasRow[]>;
  protected abstract listApiKeyHashes(): Promise<Array<{ key: ApiKeyRecord; hash: string }>>;
  protected abstract listSessions(): Promise<SessionRecord[]>;
  protected abstract listSettings(): Promise<Array<{ key: string; value: unknown }>>;
  protected abstract setLibraryCreatedAt(id: string, createdAt: string): Promise<void>;
  protected abstract insertAlias(row: AliasRow): Promise<void>;
  protected abstract setVersionDate(libraryId: string, version: string, lastUpdateDate: string | null): Promise<void>;
  protected abstract insertJob(job: JobRecord, log: JobLogLine[]): Promise<void>;
  protected abstract insertApiKey(key: ApiKeyRecord, hash: string): Promise<void>;
  abstract clearAll(): Promise<void>;

  /** Where core/vectors.ts finds this store's vectors: its own index, or files in its data directory. */
  private get vectorsHost(): { store: Store; env: { dataDir: string } } {
    return { store: this.store, env: { dataDir: this.dataDir } };
  }

  /** A raw upload's bytes: from the store's shared uploads when it has them, else the data directory's uploads folder; null when gone. */
  private async readUpload(name: string): Promise<Uint8Array | null> {
    const shared = sharedUploads(this.store);
    const file = join(uploadsDir(this.dataDir), name);
    if (shared) {
      await mkdir(dirname(file), { recursive: true });
      try {
        if (!(await shared.fetchUpload(name, file))) return null;
        return await readFile(file);
      } finally {
        await rm(file, { force: true });
      }
    }
    return readFile(file).catch(() => null);
  }

  /**
   * Writes a raw upload: into the store's shared uploads when it has them (the node that claims
   * its job fetches it, whatever path the spec names), else into the data directory's uploads
   * folder, the specs naming it pointed there (the embedded store reads that folder only).
   */
  private async writeUpload(name: string, bytes: Uint8Array): Promise<void> {
    const shared = sharedUploads(this.store);
    const file = join(uploadsDir(this.dataDir), name);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, bytes);
    if (shared) {
      try {
        await shared.putUpload(name, file);
      } finally {
        await rm(file, { force: true });
      }
      return;
    }
    for (const l of await this.store.listLibraries()) {
      const spec = l.source.spec ?? {};
      const fields = Object.keys(spec).filter((k) => typeof spec[k] === 'string' && rawUploadName(spec[k] as string) === name && spec[k] !== file);
      if (fields.length === 0) continue;
      const moved = { ...spec, ...Object.fromEntries(fields.map((k) => [k, file])) };
      await this.store.upsertLibrary({ id: l.id, title: l.title, description: l.description, branch: l.branch, source: { kind: l.source.kind, spec: moved }, stars: l.stars, trustScore: l.trustScore, benchmarkScore: l.benchmarkScore });
    }
  }

  async *exportRows(): AsyncIterable<TransferRow> {
    const s = this.store;
    const libraries = await s.listLibraries();
    for (const l of libraries) {
      yield {
        kind: 'library',
        library: { id: l.id, title: l.title, description: l.description, branch: l.branch, source: l.source, stars: l.stars, trustScore: l.trustScore, benchmarkScore: l.benchmarkScore },
        createdAt: l.createdAt,
      };
    }
    for (const a of await this.listAliases()) yield { kind: 'alias', ...a };
    for (const l of libraries) {
      for (const v of await s.listVersions(l.id)) {
        if (!v.activeBuildId) continue;
        const snippets = (await s.getSnippets(l.id, v.version)).map(({ id: _id, seq: _seq, ...rest }): Snippet => rest);
        const documents = [...(await s.getDocuments(l.id, v.version)).values()];
        const storedDocs = (await hasLocalStoredDocs(s, this.dataDir, v.activeBuildId)) ? await readFile(storedDocsPath(this.dataDir, v.activeBuildId)) : null;
        // Damaged vectors (their checksum fails) serve lexically on the source too: moved without
        // them, the target's first server queues an embed job for the version.
        const vectors = await readBuildVectors(this.vectorsHost, v.activeBuildId).catch(() => null);
        yield { kind: 'version', libraryId: l.id, version: v.version, lastUpdateDate: v.lastUpdateDate, snippets, documents, storedDocs, vectors };
      }
    }
    const byId = new Map(libraries.map((l) => [l.id, l]));
    for (const v of await getLibraryVectors(this.vectorsHost, [...byId.keys()])) yield { kind: 'libraryVector', ...v };
    // Oldest first, so the target's newest job (a library's state) is the source's.
    const jobs = (await s.listJobs()).reverse();
    // The raw uploads the jobs still to run read, before the jobs.
    const uploads = new Set<string>();
    for (const job of jobs) {
      if (job.state !== 'queued' && job.state !== 'running') continue;
      for (const name of uploadNames(byId.get(job.libraryId)?.source.spec)) uploads.add(name);
    }
    for (const name of uploads) {
      const bytes = await this.readUpload(name);
      if (bytes) yield { kind: 'upload', name, bytes };
    }
    for (const job of jobs) yield { kind: 'job', job, log: await s.getJobLog(job.id) };
    for (const { key, hash } of await this.listApiKeyHashes()) yield { kind: 'apiKey', key, hash };
    const account = await s.getAdminAccount();
    if (account) yield { kind: 'adminAccount', account };
    for (const session of await this.listSessions()) yield { kind: 'session', session };
    const audit: AuditEntryInput[] = [];
    for (let before: number | undefined; ; ) {
      const page = await s.listAudit({ limit: AUDIT_PAGE, ...(before === undefined ? {} : { before }) });
      for (const { id: _id, ...entry } of page) audit.push(entry);
      if (page.length < AUDIT_PAGE) break;
      before = page[page.length - 1]!.id;
    }
    for (const entry of audit.reverse()) yield { kind: 'audit', entry };
    for (const { key, value } of await this.listSettings()) yield { kind: 'setting', key, value };
  }

  async importRow(row: TransferRow): Promise<void> {
    const s = this.store;
    switch (row.kind) {
      case 'library':
        await s.upsertLibrary(row.library);
        return this.setLibraryCreatedAt(row.library.id, row.createdAt);
      case 'alias':
        return this.insertAlias(row);
      case 'version': {
        const buildId = await s.beginBuild(row.libraryId, row.version, null);
        try {
          for (let i = 0; i < row.snippets.length; i += SNIPPET_BATCH) await s.addSnippets(buildId, row.snippets.slice(i, i + SNIPPET_BATCH));
          if (row.documents.length > 0) await s.addDocuments(buildId, row.documents);
          // Where the ingest leaves them for finalizeBuild (a store keeping them elsewhere takes them from there).
          if (row.storedDocs) {
            const file = storedDocsPath(this.dataDir, buildId);
            await mkdir(dirname(file), { recursive: true });
            await writeFile(file, row.storedDocs);
          }
          await s.finalizeBuild(buildId);
          if (row.vectors) await saveBuildVectors(this.vectorsHost, buildId, row.vectors);
        } catch (e) {
          await s.failBuild(buildId).catch(() => undefined);
          throw e;
        }
        return this.setVersionDate(row.libraryId, row.version, row.lastUpdateDate);
      }
      case 'libraryVector':
        return putLibraryVector(this.vectorsHost, { libraryId: row.libraryId, model: row.model, vector: row.vector });
      case 'upload':
        return this.writeUpload(row.name, row.bytes);
      case 'job':
        return this.insertJob(row.job, row.log);
      case 'apiKey':
        return this.insertApiKey(row.key, row.hash);
      case 'adminAccount':
        return s.setAdminAccount(row.account);
      case 'session':
        return s.createSession(row.session);
      case 'audit':
        await s.appendAudit(row.entry);
        return;
      case 'setting':
        return s.setSetting(row.key, row.value);
    }
  }
}

/** The raw uploads a library spec names (`.../uploads/<uuid>.<ext>` values, core/uploads.ts rawUploadName). */
function uploadNames(spec: Record<string, unknown> | undefined): string[] {
  const out: string[] = [];
  for (const value of Object.values(spec ?? {})) {
    const name = typeof value === 'string' ? rawUploadName(value) : null;
    if (name) out.push(name);
  }
  return out;
}

/** A copy of `value` with every sealed string opened with `from` and sealed again with `to`. */
export function reseal<T>(value: T, from: SecretBox, to: SecretBox): T {
  if (isSealed(value)) return to.seal(from.open(value)) as T;
  if (Array.isArray(value)) return value.map((v) => reseal(v, from, to)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, reseal(v, from, to)])) as T;
  }
  return value;
}

/** The row with its secrets re-sealed (library specs and settings hold them). */
function resealRow(row: TransferRow, from: SecretBox, to: SecretBox): TransferRow {
  if (row.kind === 'library') return { ...row, library: { ...row.library, source: { ...row.library.source, spec: reseal(row.library.source.spec, from, to) } } };
  if (row.kind === 'setting') return { ...row, value: reseal(row.value, from, to) };
  return row;
}

export type TransferCounts = Record<TransferRow['kind'], number> & { snippets: number; /** served versions whose snippet vectors moved */ vectors: number };

export function emptyCounts(): TransferCounts {
  return { library: 0, alias: 0, version: 0, snippets: 0, vectors: 0, libraryVector: 0, upload: 0, job: 0, apiKey: 0, adminAccount: 0, session: 0, audit: 0, setting: 0 };
}

export interface MoveOptions {
  /** Replace a target that holds records (one a stopped move left half-written included). */
  force: boolean;
  /** Opens the source's sealed secrets. */
  from: SecretBox;
  /** Seals them for the target. */
  to: SecretBox;
  /** Told once the target is found fit and is about to be written (from then on, a failure leaves it half-written). */
  onWriting?(): void;
  /** Told after each row written. */
  onRow?(row: TransferRow, counts: TransferCounts): void;
}

/** A store and its transfer capability. */
export interface TransferEnd {
  store: Pick<Store, 'getSetting'>;
  transfer: StoreTransfer;
}

/** What a store holds: nothing, records, or the remains of a move that stopped (its marker). */
export async function transferState(end: TransferEnd): Promise<'empty' | 'not-empty' | 'half-written'> {
  if ((await end.store.getSetting(TRANSFER_MARKER)) !== undefined) return 'half-written';
  for await (const _row of end.transfer.exportRows()) return 'not-empty';
  return 'empty';
}

/**
 * Copies every row of `source` to `target` (see the module comment). Refuses (`already_exists`)
 * a target that holds records unless `force`, which empties it first. Returns the counts.
 */
export async function moveStore(source: TransferEnd, target: TransferEnd, options: MoveOptions): Promise<TransferCounts> {
  if ((await transferState(source)) === 'half-written') {
    throw new RefdeskError('invalid_request', 'The source is the half-written target of a migrate-store that did not finish; it cannot be moved.');
  }
  const state = await transferState(target);
  if (state !== 'empty') {
    if (!options.force) {
      throw new RefdeskError(
        'already_exists',
        state === 'half-written'
          ? 'The target was left half-written by a migrate-store that did not finish. Run it again with --force to replace what it wrote.'
          : 'The target already holds libraries, keys or settings. Move into an empty store, or pass --force to replace everything in it.',
      );
    }
    await target.transfer.clearAll();
  }
  const counts = emptyCounts();
  options.onWriting?.();
  await target.transfer.importRow({ kind: 'setting', key: TRANSFER_MARKER, value: { startedAt: new Date().toISOString() } });
  for await (const raw of source.transfer.exportRows()) {
    const row = resealRow(raw, options.from, options.to);
    await target.transfer.importRow(row);
    counts[row.kind]++;
    if (row.kind === 'version') {
      counts.snippets += row.snippets.length;
      if (row.vectors) counts.vectors++;
    }
    options.onRow?.(row, counts);
  }
  await target.transfer.importRow({ kind: 'setting', key: TRANSFER_MARKER, value: undefined });
  return counts;
}
