/**
 * The ingest pipeline: add request -> persisted job -> Source.read -> Chunker -> Store build,
 * switched over only when finalized. A failure (or a kill) never touches the served version.
 */
import { createHash } from 'node:crypto';
import type { BuildDocument, IngestProgress, JobRecord, LibraryMeta, LibraryRecord, LogLevel, PreviousDocument, Snippet, SourceDocument, StoredSnippet } from './contracts.ts';
import type { Kernel } from './kernel.ts';
import type { ContextSearcher } from './query.ts';
import { RefdeskError, isRefdeskError } from './errors.ts';
import { formatLibraryId, parseLibraryId, validateLibraryName } from './library-id.ts';
import { resolveLibraryId } from './library-resolve.ts';
import { validate } from './validate.ts';
import { openSpec, sealSpec, secretFields } from './secrets.ts';
import { redactFields, redactGeneric, specRedactor, type Redactor } from './redact.ts';
import { refuseLiteralPrivateUrls } from './net/address-policy.ts';
import { timeSlicer } from './yield-loop.ts';
import { holdUpload, localUpload, rawUploadFor, releaseUpload, shareUpload, withLocalUpload } from './uploads.ts';
import { mergeLibraryMeta, recordLibraryMeta, rememberUserFields } from './library-meta.ts';
import { JobLogWriter, appendJobLogLines, type JobLogEntry, type JobStage } from './job-log.ts';
import { StoredDocsWriter, hasLocalStoredDocs, readStoredDocLines, removeStoredDocs, storedDocument } from './stored-docs.ts';
import { RECHUNK_JOB_KIND, storedDocsSource } from './rechunk.ts';
import { SERVER_ALL_IN_WORKER_CHARS, SERVER_ALL_IN_WORKER_DOCS, chunkDocument } from './chunk-worker.ts';
import { buildFingerprints } from './fingerprint.ts';
import { EMBED_JOB_KIND, IngestVectors, embedServedVersion, removeBuildVectors } from './vectors.ts';

export interface AddLibraryInput {
  /** The source kind, e.g. `upload`. */
  source: string;
  /** The source's parameters, validated against its specSchema. */
  spec: Record<string, unknown>;
  /** Either a full library ID... */
  id?: string;
  /** ...or a name under the source's ID prefix (`/docs/<name>` for uploads). */
  name?: string;
  version?: string;
  title?: string;
  description?: string;
  branch?: string;
}

export interface AddLibraryResult {
  library: LibraryRecord;
  job: JobRecord;
}

/** Creates (or updates) the library and queues a persisted ingest job for it. */
export async function addLibrary(kernel: Kernel, input: AddLibraryInput): Promise<AddLibraryResult> {
  const entry = kernel.sources.get(input.source);
  if (!entry) {
    const enabled = [...kernel.sources.keys()];
    throw new RefdeskError('invalid_request', `The "${input.source}" source is not enabled on this server (enabled: ${enabled.join(', ') || 'none'}).`);
  }
  let spec = structuredClone(input.spec);
  const problems = validate(entry.def.specSchema, spec, 'spec');
  if (problems.length > 0) throw new RefdeskError('invalid_request', `Invalid ${input.source} source parameters: ${problems.join('; ')}`);
  await refuseLiteralPrivateUrls(spec, kernel.config.network);
  if (entry.source.prepare) {
    try {
      spec = await entry.source.prepare(spec);
    } catch (e) {
      throw redactError(e, specRedactor(spec, secretFields(entry.def.specSchema)));
    }
    const again = validate(entry.def.specSchema, spec, 'spec');
    if (again.length > 0) throw new RefdeskError('internal_error', `The ${input.source} source prepared an invalid spec: ${again.join('; ')}`);
  }

  let id: string;
  let version = input.version ?? '';
  if (input.id) {
    const parsed = await resolveLibraryId(kernel.store, input.id, 'whole');
    id = parsed.id;
    version = parsed.version || version;
  } else if (input.name) {
    validateLibraryName(input.name);
    if (entry.def.idPrefix === null) throw new RefdeskError('invalid_request', `The "${input.source}" source needs a full library ID (/owner/repo), not a name.`);
    id = parseLibraryId(`/${entry.def.idPrefix}/${input.name}`).id;
  } else if (entry.def.deriveId) {
    id = parseLibraryId(entry.def.deriveId(spec), { wholePath: true }).id;
  } else {
    throw new RefdeskError('invalid_request', 'Give a library name or ID.');
  }
  if (version) parseLibraryId(formatLibraryId(id, version));

  const existing = await kernel.store.getLibrary(id);
  if (existing && existing.source.kind !== input.source) {
    throw new RefdeskError('already_exists', `Library "${id}" already exists from a ${existing.source.kind} source.`);
  }
  // A store shared by several nodes keeps the raw upload too: whichever node claims the job reads it.
  const unshare = await shareUpload(kernel, { kind: input.source, spec });
  let library: LibraryRecord;
  let job: JobRecord;
  try {
    library = await kernel.store.upsertLibrary({
      id,
      title: input.title ?? existing?.title ?? id.split('/').pop()!,
      description: input.description ?? existing?.description ?? '',
      branch: input.branch ?? existing?.branch ?? '',
      source: { kind: input.source, spec: sealSpec(entry.def.specSchema, spec, kernel.secrets) },
    });
    await rememberUserFields(kernel.store, id, { title: input.title, description: input.description }, existing !== null);
    job = await kernel.store.createJob({ libraryId: id, version, kind: input.source });
  } catch (e) {
    await unshare?.().catch(() => {});
    throw e;
  }
  await kernel.store.appendJobLog(job.id, 'info', `queued: ${input.source} source for ${formatLibraryId(id, version)}`);
  await appendJobLogLines(kernel.env.dataDir, job.id, [{ level: 'info', stage: 'queued', message: `queued: ${input.source} source for ${formatLibraryId(id, version)}` }]);
  await dropReplacedUpload(kernel, existing, library);
  return { library: (await kernel.store.getLibrary(id)) ?? library, job };
}

/**
 * A new upload replaced the library's raw upload: queued jobs will read the new file, so the old
 * one goes now, unless a running job reads it (that job removes it when it ends).
 */
async function dropReplacedUpload(kernel: Kernel, before: LibraryRecord | null, after: LibraryRecord): Promise<void> {
  const old = before ? rawUploadFor(kernel, before.source) : null;
  if (!old || old === rawUploadFor(kernel, after.source)) return;
  await releaseUpload(kernel, old).catch((e: unknown) => kernel.logger.warn('could not remove a replaced raw upload', { library: after.id, error: (e as Error).message }));
}

/**
 * The reason `RunJobOptions.signal` is aborted with when a shared queue took the job back (the
 * node's lease was lost): the job is not queued again by this run, and its log says so.
 */
export class JobLeaseLost extends Error {
  override name = 'JobLeaseLost';
}

export interface RunJobOptions {
  signal?: AbortSignal;
  /** Called with cumulative progress (files, bytes, snippets) as the job advances. */
  onProgress?(p: Required<Pick<IngestProgress, 'files' | 'snippets'>> & IngestProgress & { elapsedMs: number }): void;
  /** Snippets written per store batch (default 250). */
  batchSize?: number;
  /** Aborted to cancel this job: it ends `failed` with error code `cancelled`; the served version is unchanged. */
  cancel?: AbortSignal;
  /** Called once the job is claimed (running), and with each line of its log as it is written. */
  onStart?(job: JobRecord): void;
  onLog?(entry: JobLogEntry): void;
  /**
   * Documents from this many characters on are chunked in a worker thread (core/chunk-worker.ts;
   * default CHUNK_WORKER_MIN_CHARS, 0: all on the main thread).
   */
  chunkWorkerMinChars?: number;
  /**
   * In a server: once the job has read this many characters (default SERVER_ALL_IN_WORKER_CHARS),
   * or its source expects at least `allInWorkerDocs` documents (default SERVER_ALL_IN_WORKER_DOCS),
   * every document is chunked in the worker thread, small ones too (with `chunkWorkerMinChars` > 0).
   */
  allInWorkerChars?: number;
  allInWorkerDocs?: number;
  /** The job, already claimed by the caller (a shared queue's claimNextJob): run without claiming it again. */
  claimed?: JobRecord;
  /** Searches the self-retrieval check's questions off the event loop (a server's search pool; core/library-meta.ts). */
  searcher?: ContextSearcher;
}

/**
 * Runs a queued job to its end. The job is claimed first (queued -> running, atomically): when it
 * is not queued any more (another runner took it, it finished or was deleted), it is not run and
 * its current record is returned. Resolves with the final job record: succeeded or failed, or
 * queued again when `signal` stopped it (shutdown: it runs again at the next start).
 */
export async function runIngestJob(kernel: Kernel, jobId: string, options: RunJobOptions = {}): Promise<JobRecord> {
  const { store, logger } = kernel;
  const claimed = options.claimed?.id === jobId ? options.claimed : await store.claimJob(jobId);
  if (!claimed) {
    const current = await store.getJob(jobId);
    if (!current) throw new RefdeskError('invalid_request', `Unknown job "${jobId}".`);
    logger.debug('job not run: it is not queued', { job: jobId, state: current.state });
    return current;
  }
  const job = claimed;
  options.onStart?.(job);
  const jobLog = new JobLogWriter(kernel.env.dataDir, job.id, { onError: (e) => logger.warn('could not write a job log', { job: job.id, error: e.message }) });
  let stage: JobStage = 'starting';
  const library = await store.getLibrary(job.libraryId);
  const entry = library ? kernel.sources.get(library.source.kind) : undefined;
  // A rechunk job reads the served build's stored documents, not the source (core/rechunk.ts).
  const rechunk = job.kind === RECHUNK_JOB_KIND;
  const rawUpload = library && !rechunk ? rawUploadFor(kernel, library.source) : null;
  // Held from the moment the spec is read: a newer upload replacing it leaves it to this job.
  const unhold = rawUpload ? holdUpload(kernel, rawUpload) : () => {};
  const started = Date.now();
  const progress = { files: 0, snippets: 0, bytes: 0 } as Required<Pick<IngestProgress, 'files' | 'snippets'>> & IngestProgress;
  let skippedDocuments = 0;
  // Every line and error of this job leaves through `redact`: the job's secrets never do.
  const redact = library ? jobRedactor(kernel, entry?.def.specSchema, library.source.spec) : redactGeneric;
  const log = (level: LogLevel, message: string, fields?: { path?: string }) => {
    const line = redact(message);
    if (level === 'warn' && /^skipped /i.test(line)) skippedDocuments++;
    const entry = jobLog.append({ level, stage, message: line, ...(typeof fields?.path === 'string' && fields.path ? { path: redact(fields.path.slice(0, 1000)) } : {}) });
    if (entry) options.onLog?.(entry);
    store.appendJobLog(job.id, level, line).catch(() => {});
    logger.log(level, line, { job: job.id, library: job.libraryId });
  };
  let lastProgressWrite = 0;
  const report = (force = false) => {
    options.onProgress?.({ ...progress, elapsedMs: Date.now() - started });
    const now = Date.now();
    if (force || now - lastProgressWrite > 1000) {
      lastProgressWrite = now;
      void store.updateJob(job.id, { progress: { ...progress } }).catch(() => {});
    }
  };
  /** The job's raw upload is not needed once the job has ended (kept while it may run again). */
  const ended = async (finish: () => Promise<JobRecord>): Promise<JobRecord> => {
    // Every line is in the job's log before the job is seen to end: a client that polls the job's
    // state and then reads its log gets the whole log (lines are buffered for up to 250 ms).
    await jobLog.close();
    const record = await finish();
    unhold();
    if (rawUpload) {
      await releaseUpload(kernel, rawUpload, job.id).then(
        (removed) => removed && logger.debug('removed the raw upload of an ended job', { job: job.id }),
        (e: unknown) => logger.warn('could not remove a raw upload', { job: job.id, error: (e as Error).message }),
      );
    }
    return record;
  };

  let buildId: string | null = null;
  let docsOut: StoredDocsWriter | null = null;
  try {
    await store.updateJob(job.id, { progress });
    if (!library) throw new RefdeskError('library_not_found', `Library "${job.libraryId}" not found.`);
    if (job.kind === EMBED_JOB_KIND) {
      // An embed job: vectors for the served build, no new build (core/vectors.ts).
      log('info', `started: embedding ${formatLibraryId(job.libraryId, job.version)}`);
      stage = 'writing';
      const embedSignal = AbortSignal.any([...(options.signal ? [options.signal] : []), ...(options.cancel ? [options.cancel] : [])]);
      await embedServedVersion(kernel, job, { signal: embedSignal, log, progress: (done, total) => ((progress.snippets = done), (progress.message = `${done} of ${total} snippets have vectors`), report()) });
      stage = 'done';
      log('info', `finalized: embedded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return await ended(() => store.updateJob(job.id, { state: 'succeeded', progress: { ...progress } }));
    }
    log('info', `started: reading ${library.source.kind} source for ${formatLibraryId(job.libraryId, job.version)}`);
    if (!entry && !rechunk) throw new RefdeskError('invalid_request', `The "${library.source.kind}" source is not enabled on this server.`);
    // Received by another node: fetched from the store's shared uploads to this node's folder.
    if (rawUpload) await localUpload(kernel, rawUpload);
    const servedBuild = (await store.getVersion(job.libraryId, job.version))?.activeBuildId ?? null;
    if (rechunk && (!servedBuild || !(await hasLocalStoredDocs(store, kernel.env.dataDir, servedBuild)))) {
      throw new RefdeskError('invalid_request', `${formatLibraryId(job.libraryId, job.version)} has no stored documents to re-chunk: add or refresh it from its source.`);
    }
    buildId = await store.beginBuild(job.libraryId, job.version, job.id);
    // With an embedder configured, the build's snippets get vectors before it is finalized.
    const vectors = await IngestVectors.start(kernel);
    // Documents of the served build that this kernel's chunking made: the source may skip them.
    // A rechunk job chunks every document again.
    const fingerprints = buildFingerprints(kernel, library.source.kind);
    const previous = new Map<string, PreviousDocument>();
    for (const [path, d] of rechunk ? [] : await store.getDocuments(job.libraryId, job.version)) {
      if (fingerprints.current(d.chunker)) previous.set(path, { hash: d.hash, meta: d.meta });
    }
    // The stored build: the documents as the chunker consumes them, streamed to a compressed file.
    try {
      docsOut = await StoredDocsWriter.create(kernel.env.dataDir, buildId);
    } catch (e) {
      log('warn', `the build's documents are not stored (${(e as Error).message}): a chunker change will need the source again`);
    }
    const dropStoredDocs = async (why: string) => {
      if (!docsOut) return;
      await docsOut.discard();
      docsOut = null;
      log('warn', `the build's documents are not stored (${why}): a chunker change will need the source again`);
    };
    const storeDoc = async (doc: SourceDocument, hash: string, meta: Record<string, string>) => {
      if (!docsOut) return;
      try {
        if (!doc.unchanged) return await docsOut.add(storedDocument(doc, hash, meta));
        // Unchanged and not read again: its stored copy comes from the served build's.
        const line = (await servedLines()).get(doc.path);
        if (line === undefined) return await dropStoredDocs(`the served build has no stored copy of ${doc.path}`);
        await docsOut.addLine(line);
      } catch (e) {
        await dropStoredDocs((e as Error).message);
      }
    };
    let servedLineMap: Map<string, string> | null = null;
    const servedLines = async (): Promise<Map<string, string>> => {
      if (servedLineMap) return servedLineMap;
      servedLineMap = new Map();
      if (servedBuild && (await hasLocalStoredDocs(store, kernel.env.dataDir, servedBuild))) {
        try {
          for await (const { path, line } of readStoredDocLines(kernel.env.dataDir, servedBuild)) servedLineMap.set(path, line);
        } catch (e) {
          log('warn', `the served build's stored documents cannot be read: ${(e as Error).message}`);
          servedLineMap.clear();
        }
      }
      return servedLineMap;
    };
    // Read once, on the first document reused (documents are in flight side by side: one read).
    let previousSnippets: Promise<Map<string, Snippet[]>> | null = null;
    const reuse = async (path: string): Promise<Snippet[]> => {
      previousSnippets ??= store.getSnippets(job.libraryId, job.version).then(groupByPath);
      return (await previousSnippets).get(path) ?? [];
    };
    let reused = 0;
    let documents: BuildDocument[] = [];
    const seenPaths = new Set<string>();
    const suggested = new Set<string>();
    const controller = new AbortController();
    const signal = AbortSignal.any([controller.signal, ...(options.signal ? [options.signal] : []), ...(options.cancel ? [options.cancel] : [])]);
    stage = 'reading';
    // Small batches: a batch is one synchronous insert, which holds the event loop while it runs.
    const batchSize = options.batchSize ?? 250;
    let batch: Snippet[] = [];
    let totalTokens = 0;
    const libraryMeta: LibraryMeta = {};
    // Reading and chunking are synchronous work between awaits: give the event loop back every few
    // milliseconds so that a server keeps answering while it ingests.
    const pause = timeSlicer();
    const reader = rechunk
      ? storedDocsSource(kernel.env.dataDir, servedBuild!)
      : entry!.source.read({
          libraryId: job.libraryId,
          version: job.version,
          spec: withLocalUpload(kernel, openSpec(entry!.def.specSchema, library.source.spec, kernel.secrets), rawUpload),
          signal,
          previous,
          suggestVersions: (versions) => {
            for (const v of versions) if (typeof v === 'string' && v !== '') suggested.add(v);
          },
          log,
          setLibraryMeta: (meta) => mergeLibraryMeta(libraryMeta, meta),
          progress: (p) => {
            if (p.bytes !== undefined) progress.bytes = p.bytes;
            if (typeof p.total === 'number' && p.total >= 0) progress.total = p.total;
            if (p.message) progress.message = redact(p.message);
            report();
          },
        });
    if (rechunk) log('info', `re-chunking from the stored documents of the served build (the chunking configuration changed)`);
    // Chunking is pipelined: a document sent to the chunk worker is not waited for before the next
    // one is read; up to IN_FLIGHT_DOCS documents (IN_FLIGHT_CHARS characters) are in flight, and
    // their snippets are taken in the order the source gave the documents, so the build is the
    // same as one chunked a document at a time. Meanwhile this thread reads, hashes, compresses,
    // chunks the small documents and writes batches: on two cores both work at once.
    const inFlight: InFlightDocument[] = [];
    // A server keeps fewer documents in flight: less of its heap for each scavenge to copy.
    const server = kernel.env.mode === 'server';
    const windowDocs = server ? SERVER_IN_FLIGHT_DOCS : IN_FLIGHT_DOCS;
    const windowChars = server ? SERVER_IN_FLIGHT_CHARS : IN_FLIGHT_CHARS;
    let inFlightChars = 0;
    // A server's large ingest sends every document to the chunk worker (chunk-worker.ts).
    let readChars = 0;
    const allInWorkerChars = options.allInWorkerChars ?? SERVER_ALL_IN_WORKER_CHARS;
    const allInWorkerDocs = options.allInWorkerDocs ?? SERVER_ALL_IN_WORKER_DOCS;
    const complete = async (item: InFlightDocument): Promise<void> => {
      const chunked = await item.snippets;
      inFlightChars -= item.chars;
      const { doc, hash, meta, before } = item;
      if (!chunked.ok) {
        if (!item.chunking) throw chunked.error; // the store could not give the reused snippets: the job fails, as before
        log('warn', `skipped ${doc.path}: the chunker failed (${chunked.error.message})`);
        return;
      }
      const snippets = chunked.snippets;
      await storeDoc(doc, hash, meta);
      // The job's log file only (not the store's lines, not the process log): one line per document.
      const line = jobLog.append({ level: 'debug', stage, message: redact(`${doc.path}: ${snippets.length} snippets${before && before.hash === hash ? ' (unchanged, reused)' : ''}`), path: redact(doc.path) });
      if (line) options.onLog?.(line);
      documents.push({ path: doc.path, hash, meta, chunker: fingerprints.of(doc.format) });
      progress.files++;
      progress.snippets += snippets.length;
      for (const s of snippets) totalTokens += s.tokens;
      batch.push(...snippets);
      vectors?.add(snippets);
      if (batch.length >= batchSize) {
        await store.addSnippets(buildId!, batch);
        await store.addDocuments(buildId!, documents);
        batch = [];
        documents = [];
      }
      report();
    };
    /** Completes the documents whose snippets are ready (all of them with `all`), in order. */
    const drain = async (all: boolean): Promise<void> => {
      while (inFlight.length > 0 && (all || inFlight[0].settled || inFlight.length > windowDocs || inFlightChars > windowChars)) {
        await complete(inFlight.shift()!);
        await pause();
      }
    };
    for await (const doc of reader) {
      await pause();
      signal.throwIfAborted();
      if (seenPaths.has(doc.path)) {
        log('warn', `skipped ${doc.path}: the source gave this path twice`);
        continue;
      }
      seenPaths.add(doc.path);
      const before = previous.get(doc.path);
      let snippets: Promise<Snippet[]>;
      let chunking = false;
      let hash: string;
      let meta = doc.meta ?? {};
      if (doc.unchanged) {
        if (!before) {
          log('warn', `skipped ${doc.path}: the source marked it unchanged, but the served build does not have it`);
          continue;
        }
        hash = before.hash;
        if (!doc.meta) meta = before.meta;
        snippets = reuse(doc.path);
        reused++;
      } else {
        hash = doc.hash ?? contentHash(doc.content, doc.lineMap);
        if (before && before.hash === hash) {
          snippets = reuse(doc.path);
          reused++;
        } else {
          snippets = chunkDocument(kernel, doc, options.chunkWorkerMinChars, readChars >= allInWorkerChars || (progress.total ?? 0) >= allInWorkerDocs);
          chunking = true;
        }
      }
      inFlight.push(inFlightDocument(doc, hash, meta, before, snippets, chunking));
      inFlightChars += doc.content.length;
      readChars += doc.content.length;
      await drain(false);
    }
    await drain(true);
    stage = 'writing';
    if (batch.length > 0) await store.addSnippets(buildId, batch);
    if (documents.length > 0) await store.addDocuments(buildId, documents);
    const removed = [...previous.keys()].filter((p) => !seenPaths.has(p)).length;
    if (previous.size > 0) {
      log('info', `refresh: ${reused} documents unchanged (snippets reused), ${progress.files - reused} read and chunked, ${removed} removed`);
    }
    if (progress.snippets === 0) {
      throw new RefdeskError('no_documentation', `No documentation found: the source gave ${progress.files} documents and no snippets.`);
    }
    if (vectors) await vectors.finish(buildId, job, servedBuild, { signal, log });
    stage = 'finalizing';
    if (docsOut) {
      const out: StoredDocsWriter = docsOut;
      docsOut = null;
      await out.commit().catch(async (e: unknown) => {
        await out.discard();
        log('warn', `the build's documents are not stored (${(e as Error).message}): a chunker change will need the source again`);
      });
    }
    const finalized = buildId;
    await store.finalizeBuild(buildId);
    buildId = null;
    if (servedBuild && servedBuild !== finalized) await removeBuildVectors(kernel.env.dataDir, servedBuild);
    if (job.version === '' && suggested.size > 0) await queueSuggestedVersions(kernel, job.libraryId, library.source.kind, [...suggested], log);
    if (job.version === '') await recordLibraryMeta(kernel, job.libraryId, libraryMeta, { documents: progress.files, skippedDocuments, snippets: progress.snippets }, log, options.searcher);
    report(true);
    stage = 'done';
    log('info', `finalized: ${progress.files} documents, ${progress.snippets} snippets, ${totalTokens} tokens in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return await ended(() => store.updateJob(job.id, { state: 'succeeded', progress: { ...progress } }));
  } catch (e) {
    if (docsOut) await (docsOut as StoredDocsWriter).discard();
    if (buildId) {
      await store.failBuild(buildId).catch(() => {});
      await removeStoredDocs(kernel.env.dataDir, [buildId]).catch(() => {});
      await removeBuildVectors(kernel.env.dataDir, buildId);
    }
    if (options.cancel?.aborted && !options.signal?.aborted) {
      stage = 'cancelled';
      log('warn', 'cancelled by an admin before it finished: the served version is unchanged');
      return await ended(() => store.updateJob(job.id, { state: 'failed', error: { code: 'cancelled', message: 'Cancelled by an admin before it finished.' }, progress: { ...progress } }));
    }
    if (options.signal?.aborted && options.signal.reason instanceof JobLeaseLost) {
      // A shared queue took the job back (this node's lease expired): another node runs it now and
      // the store refuses this node's writes to it, so only this node's own log says why it stopped.
      unhold();
      log('warn', 'stopped: this node lost the job\'s lease (its renewals did not reach the database in time), so the job went back to the queue or to another node, which runs it from the start; nothing of this run is kept');
      await jobLog.close();
      return (await store.getJob(job.id)) ?? job;
    }
    if (options.signal?.aborted) {
      // Shutdown, not a fault of the source: the served version is unchanged and the job runs
      // again (from the start) when the server starts next.
      unhold();
      log('warn', 'stopped by a shutdown before it finished: queued to run again at the next start; the served version is unchanged');
      await jobLog.close();
      return await store.updateJob(job.id, { state: 'queued', error: null, progress: { ...progress } });
    }
    const err = isRefdeskError(e) ? { code: e.code, message: redact(e.message) } : { code: 'internal_error', message: redact(`Ingest failed: ${(e as Error).message}`) };
    stage = 'failed';
    log('error', `failed: ${err.message}`);
    if (!isRefdeskError(e)) logger.error('ingest crashed', redactFields({ job: job.id, stack: (e as Error).stack }, redact));
    return await ended(() => store.updateJob(job.id, { state: 'failed', error: err, progress: { ...progress } }));
  }
}

/** The redactor of a job: its opened spec's secrets; the generic one when the spec cannot be opened. */
function jobRedactor(kernel: Kernel, schema: Parameters<typeof secretFields>[0] | undefined, sealed: Record<string, unknown>): Redactor {
  if (!schema) return redactGeneric;
  try {
    return specRedactor(openSpec(schema, sealed, kernel.secrets), secretFields(schema));
  } catch {
    return redactGeneric;
  }
}

/** The same error with its message redacted (a RefdeskError keeps its code). */
function redactError(e: unknown, redact: Redactor): unknown {
  if (isRefdeskError(e)) return new RefdeskError(e.code, redact(e.message));
  if (e instanceof Error) {
    e.message = redact(e.message);
    if (e.stack) e.stack = redact(e.stack);
  }
  return e;
}

/** The kernel's fingerprint of a document without a source hash: its content and line map. */
function contentHash(content: string, lineMap: readonly number[] | undefined): string {
  const h = createHash('sha1').update(content);
  if (lineMap) h.update('\0lines:').update(lineMap.join(','));
  return h.digest('hex');
}

function groupByPath(snippets: StoredSnippet[]): Map<string, Snippet[]> {
  const out = new Map<string, Snippet[]>();
  for (const stored of snippets) {
    const { id: _id, seq: _seq, ...snippet } = stored;
    let list = out.get(snippet.sourcePath);
    if (!list) out.set(snippet.sourcePath, (list = []));
    list.push({ ...snippet, breadcrumb: [...snippet.breadcrumb] });
  }
  return out;
}

/** Queues a job for each suggested version that has no build and no job waiting or running. */
async function queueSuggestedVersions(kernel: Kernel, libraryId: string, kind: string, versions: string[], log: (level: LogLevel, message: string) => void): Promise<void> {
  const built = new Set((await kernel.store.listVersions(libraryId)).map((v) => v.version));
  const pending = new Set(
    (await kernel.store.listJobs({ libraryId, limit: 1000 })).filter((j) => j.state === 'queued' || j.state === 'running').map((j) => j.version),
  );
  const queued: string[] = [];
  for (const version of versions) {
    if (built.has(version) || pending.has(version)) continue;
    try {
      parseLibraryId(formatLibraryId(libraryId, version));
    } catch {
      log('warn', `not queueing version "${version.slice(0, 40)}": it cannot be part of a library ID`);
      continue;
    }
    const job = await kernel.store.createJob({ libraryId, version, kind });
    await kernel.store.appendJobLog(job.id, 'info', `queued: ${kind} source for ${formatLibraryId(libraryId, version)} (named by the source's previous versions)`);
    await appendJobLogLines(kernel.env.dataDir, job.id, [{ level: 'info', stage: 'queued', message: `queued: ${kind} source for ${formatLibraryId(libraryId, version)} (named by the source's previous versions)` }]);
    queued.push(version);
  }
  if (queued.length > 0) log('info', `queued ${queued.length} more versions the source names: ${queued.join(', ')}`);
}

/** Documents from the source may be this far ahead of the ones whose snippets are written. */
const IN_FLIGHT_DOCS = 32;
const IN_FLIGHT_CHARS = 4 << 20;
/**
 * In a server, fewer: the documents in flight live on the main thread's heap, which each scavenge
 * copies; python in a server, 8 documents / 1 MiB against 32 / 4 MiB: main-thread GC 0.5 - 0.8 s
 * against 0.6 - 2.2 s, event-loop delay max 160 - 320 ms against 259 - 527 ms, the same ingest
 * time (docs/benchmark.md, "Ingest, round 5").
 */
const SERVER_IN_FLIGHT_DOCS = 8;
const SERVER_IN_FLIGHT_CHARS = 1 << 20;

/** A document read and sent to its chunker (or to reuse), its snippets not yet written. */
interface InFlightDocument {
  doc: SourceDocument;
  hash: string;
  meta: Record<string, string>;
  before: PreviousDocument | undefined;
  chars: number;
  /** Chunked (not reused from the served build): a failure skips the document, not the job. */
  chunking: boolean;
  /** Never rejects: a chunker's failure skips the document when its turn comes. */
  snippets: Promise<{ ok: true; snippets: Snippet[] } | { ok: false; error: Error }>;
  settled: boolean;
}

function inFlightDocument(doc: SourceDocument, hash: string, meta: Record<string, string>, before: PreviousDocument | undefined, snippets: Promise<Snippet[]>, chunking: boolean): InFlightDocument {
  const item: InFlightDocument = { doc, hash, meta, before, chars: doc.content.length, chunking, snippets: null!, settled: false };
  item.snippets = snippets.then(
    (s) => ((item.settled = true), { ok: true as const, snippets: s }),
    (e: unknown) => ((item.settled = true), { ok: false as const, error: e instanceof Error ? e : new Error(String(e)) }),
  );
  return item;
}
