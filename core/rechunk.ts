/**
 * Re-chunking from stored builds (issue 17): when what built a library version changes (its
 * source's plugin or options, or the chunker that chunked its documents: core/fingerprint.ts),
 * or its store cannot read its index segment (another segment format: BuildStore.unreadableBuilds),
 * that version gets a `rechunk` job; versions built by unchanged plugins are left alone. The job reads the documents the served build
 * stored (core/stored-docs.ts) instead of the source, so it needs neither the source nor the
 * upload, and builds the version anew beside the served one like any ingest.
 */
import type { ServedBuildChunkers, SourceDocument, Store } from './contracts.ts';
import type { Kernel } from './kernel.ts';
import { buildFingerprints } from './fingerprint.ts';
import { formatLibraryId } from './library-id.ts';
import { hasLocalStoredDocs, readStoredDocs } from './stored-docs.ts';
import { queueJobOnce } from './queue-once.ts';

/** The kind of a job that re-chunks a version from its stored build. */
export const RECHUNK_JOB_KIND = 'rechunk';

/** The stored documents of a build as the source of a rechunk job. */
export async function* storedDocsSource(dataDir: string, buildId: string): AsyncGenerator<SourceDocument> {
  for await (const d of readStoredDocs(dataDir, buildId)) yield d;
}

export interface RechunkPlan {
  /** Versions queued for re-chunking (`/id` or `/id/version`). */
  queued: string[];
  /** Versions chunked otherwise that cannot be re-chunked: their builds stored no documents. */
  withoutStoredDocs: string[];
}

/**
 * Every served build with the chunkers of its documents: one read when the store offers it
 * (Store.servedBuildChunkers), else version by version (listVersions, getDocuments).
 */
async function servedBuilds(store: Store, libraryIds: readonly string[]): Promise<ServedBuildChunkers[]> {
  if (store.servedBuildChunkers) return store.servedBuildChunkers();
  const out: ServedBuildChunkers[] = [];
  for (const libraryId of libraryIds) {
    for (const v of await store.listVersions(libraryId)) {
      if (!v.activeBuildId) continue;
      const docs = await store.getDocuments(libraryId, v.version);
      out.push({ libraryId, version: v.version, buildId: v.activeBuildId, chunkers: [...new Set([...docs.values()].map((d) => d.chunker))].sort() });
    }
  }
  return out;
}

/**
 * Queues a rechunk job for every served version whose documents another chunking configuration
 * made and whose served build has its documents stored, unless a job of that version is queued or
 * running already (on a shared store, also one that another node starting at the same moment
 * queued: core/queue-once.ts). Called when a server starts (the configuration is read at start).
 */
export async function queueRechunks(kernel: Kernel): Promise<RechunkPlan> {
  const { store } = kernel;
  const plan: RechunkPlan = { queued: [], withoutStoredDocs: [] };
  // Builds whose index segment this code cannot read (another segment format) are re-chunked too.
  const unreadable = (await store.unreadableBuilds?.()) ?? new Set<string>();
  const libraries = new Map((await store.listLibraries()).map((l) => [l.id, l]));
  const pending = new Set<string>();
  for (const state of ['queued', 'running'] as const) for (const j of await store.listJobs({ state })) pending.add(`${j.libraryId}\0${j.version}`);
  let turn = performance.now();
  for (const served of await servedBuilds(store, [...libraries.keys()])) {
    // The check runs beside a starting server's first requests: it gives them a turn now and then.
    if (performance.now() - turn > 10) {
      await new Promise((resolve) => setImmediate(resolve));
      turn = performance.now();
    }
    const library = libraries.get(served.libraryId);
    if (!library || pending.has(`${served.libraryId}\0${served.version}`)) continue;
    const fingerprints = buildFingerprints(kernel, library.source.kind);
    const formatChanged = unreadable.has(served.buildId);
    if (served.chunkers.length === 0 || (!formatChanged && served.chunkers.every((c) => fingerprints.current(c)))) continue;
    const name = formatLibraryId(library.id, served.version);
    if (!(await hasLocalStoredDocs(store, kernel.env.dataDir, served.buildId))) {
      plan.withoutStoredDocs.push(name);
      continue;
    }
    // Another node starting now may queue it first: then it is not queued twice.
    const job = await queueJobOnce(store, { libraryId: library.id, version: served.version, kind: RECHUNK_JOB_KIND });
    if (!job) continue;
    const why = formatChanged ? 'its index segment is of a format this version cannot read' : 'the source or chunker that built it changed';
    await store.appendJobLog(job.id, 'info', `queued: re-chunking ${name} from its stored documents (${why})`);
    plan.queued.push(name);
  }
  if (plan.queued.length > 0) kernel.logger.info('the source or chunker that built these versions changed: re-chunking them from their stored documents', { versions: plan.queued });
  if (plan.withoutStoredDocs.length > 0) {
    kernel.logger.warn('the source or chunker that built these versions changed (or their index segments are of another format), but they stored no documents: add or refresh them to re-chunk them', {
      versions: plan.withoutStoredDocs,
    });
  }
  return plan;
}
