/**
 * Plugin test kit: run a Source the way the kernel does, and collect what it produced.
 */
import type { IngestProgress, LibraryMeta, Logger, LogLevel, PreviousDocument, Source, SourceContext, SourceDocument } from '../contracts.ts';
import { lineMapProblems } from '../includes/line-map.ts';

export interface RunSourceResult {
  documents: SourceDocument[];
  /** The job log lines the source wrote through `ctx.log`, in order. */
  logs: Array<{ level: LogLevel; message: string; path?: string }>;
  /** Every `ctx.progress` report, in order. */
  progress: IngestProgress[];
  /** The library metadata the source reported through `ctx.setLibraryMeta`, merged in call order. */
  meta: LibraryMeta;
}

/**
 * Builds a SourceContext, drains `source.read()` and returns everything it yielded and reported.
 * Errors from the source propagate unchanged. A source that breaks the contract (a document
 * without a path, format or string content, a bad line map, or the same path twice) makes it
 * throw too.
 */
export async function runSource(
  source: Source,
  spec: Record<string, unknown>,
  opts: { libraryId?: string; version?: string; signal?: AbortSignal; previous?: ReadonlyMap<string, PreviousDocument> } = {},
): Promise<RunSourceResult> {
  const logs: RunSourceResult['logs'] = [];
  const progress: IngestProgress[] = [];
  const meta: LibraryMeta = {};
  const ctx: SourceContext = {
    libraryId: opts.libraryId ?? '/docs/test',
    version: opts.version ?? '',
    spec,
    signal: opts.signal ?? new AbortController().signal,
    previous: opts.previous ?? new Map(),
    log(level, message, fields) {
      logs.push({ level, message, ...(fields?.path !== undefined ? { path: fields.path } : {}) });
    },
    progress(p) {
      progress.push({ ...p });
    },
    setLibraryMeta(m) {
      for (const [k, v] of Object.entries(m)) if (v !== undefined) (meta as Record<string, unknown>)[k] = v;
    },
  };
  const documents: SourceDocument[] = [];
  const seen = new Set<string>();
  for await (const doc of source.read(ctx)) {
    if (typeof doc?.path !== 'string' || doc.path === '') {
      throw new Error(`Source contract violation: document #${documents.length + 1} has no path`);
    }
    if (typeof doc.format !== 'string' || doc.format === '' || typeof doc.content !== 'string') {
      throw new Error(`Source contract violation: document ${doc.path} needs a format and string content`);
    }
    if (doc.lineMap !== undefined) {
      const problems = lineMapProblems(doc.lineMap, doc.content);
      if (problems.length > 0) throw new Error(`Source contract violation: document ${doc.path}: ${problems.join('; ')}`);
    }
    if (seen.has(doc.path)) throw new Error(`Source contract violation: document ${doc.path} was yielded twice`);
    seen.add(doc.path);
    documents.push(doc);
  }
  return { documents, logs, progress, meta };
}

export interface TestLogLine {
  level: LogLevel;
  message: string;
  fields?: Record<string, unknown>;
}

/** A Logger that keeps every line in `.lines`. */
export interface TestLogger extends Logger {
  readonly lines: TestLogLine[];
}

export function createTestLogger(): TestLogger {
  const lines: TestLogLine[] = [];
  const log = (level: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    lines.push(fields === undefined ? { level, message } : { level, message, fields });
  };
  return {
    lines,
    log,
    debug: (message, fields) => log('debug', message, fields),
    info: (message, fields) => log('info', message, fields),
    warn: (message, fields) => log('warn', message, fields),
    error: (message, fields) => log('error', message, fields),
  };
}
