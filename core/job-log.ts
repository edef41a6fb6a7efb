/**
 * Job logs on disk: one JSON-lines file per job, `DATA_DIR/jobs/<jobId>.log`, each line
 * `{seq, at, level, stage, message, path?}`. Lines are buffered and appended in batches (every
 * `flushMs`, or `maxBuffered` lines, and when the job ends), never one database write per line.
 * Messages arrive here already redacted (the ingest's job redactor). Files older than the
 * retention (config `jobs.logRetentionDays`) are pruned at start and daily (server/job-runner.ts).
 *
 *   const log = new JobLogWriter(dataDir, job.id);
 *   log.append({ level: 'info', stage: 'reading', message: 'read docs/a.md', path: 'docs/a.md' });
 *   await log.close();
 *   const lines = await readJobLog(dataDir, job.id);   // [] when the job has no log file
 */
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { LogLevel } from './contracts.ts';

/** Stages a job passes through, in order (a job log line names the one it was written in). */
export type JobStage = 'queued' | 'starting' | 'reading' | 'writing' | 'finalizing' | 'done' | 'failed' | 'cancelled';

export interface JobLogEntry {
  /** 1-based line number within the job's log. */
  seq: number;
  /** ISO 8601 time the line was written. */
  at: string;
  level: LogLevel;
  stage: JobStage | (string & {});
  message: string;
  /** The document (file, page) the line is about, when it is about one. */
  path?: string;
}

export type JobLogInput = Omit<JobLogEntry, 'seq' | 'at'> & { at?: string };

/** Lines kept per job: past it only warnings and errors are written (a job reading 100,000 files stays readable). */
export const JOB_LOG_MAX_LINES = 20_000;
const JOB_ID = /^[A-Za-z0-9_-]{1,100}$/;

export function jobLogsDir(dataDir: string): string {
  return join(dataDir, 'jobs');
}

/** The log file of a job; null for an ID that cannot be a job's (never a path outside the folder). */
export function jobLogPath(dataDir: string, jobId: string): string | null {
  return JOB_ID.test(jobId) ? join(jobLogsDir(dataDir), `${jobId}.log`) : null;
}

function countLines(file: string): number {
  if (!existsSync(file)) return 0;
  const text = readFileSync(file, 'utf8');
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * Appends the lines of one job's log. A job run again (after a restart) continues the same file
 * and numbering. `append` never throws and never waits: write failures are reported once to
 * `onError` and the job goes on.
 */
export class JobLogWriter {
  private buffer: string[] = [];
  private seq: number;
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  private dirMade = false;
  private truncated = false;
  private failed = false;
  private readonly file: string;

  constructor(
    private readonly dataDir: string,
    jobId: string,
    private readonly options: { flushMs?: number; maxBuffered?: number; onError?: (e: Error) => void } = {},
  ) {
    const file = jobLogPath(dataDir, jobId);
    if (!file) throw new Error(`Not a job ID: ${jobId.slice(0, 40)}`);
    this.file = file;
    this.seq = countLines(file);
  }

  /** Adds a line (numbered and timed here); returns it, or null when the log is full and it is not a warning or error. */
  append(input: JobLogInput): JobLogEntry | null {
    if (this.seq >= JOB_LOG_MAX_LINES && input.level !== 'warn' && input.level !== 'error') {
      if (this.truncated) return null;
      this.truncated = true;
      input = { level: 'warn', stage: input.stage, message: `log truncated: more than ${JOB_LOG_MAX_LINES} lines; only warnings and errors are kept from here` };
    }
    const entry: JobLogEntry = { seq: ++this.seq, at: input.at ?? new Date().toISOString(), level: input.level, stage: input.stage, message: input.message };
    if (input.path) entry.path = input.path;
    this.buffer.push(JSON.stringify(entry));
    if (this.buffer.length >= (this.options.maxBuffered ?? 200)) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.options.flushMs ?? 250).unref();
    return entry;
  }

  /** Writes the buffered lines; resolves once they are on disk (appended in one write). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.buffer.length === 0) return this.writing;
    const text = this.buffer.join('\n') + '\n';
    this.buffer = [];
    this.writing = this.writing.then(async () => {
      try {
        if (!this.dirMade) await mkdir(jobLogsDir(this.dataDir), { recursive: true });
        this.dirMade = true;
        await appendFile(this.file, text, 'utf8');
      } catch (e) {
        if (!this.failed) this.options.onError?.(e as Error);
        this.failed = true;
      }
    });
    return this.writing;
  }

  close(): Promise<void> {
    return this.flush();
  }
}

/** Appends lines to a job's log at once (lines written outside a run: queued, cancelled before it ran). */
export async function appendJobLogLines(dataDir: string, jobId: string, lines: JobLogInput[]): Promise<JobLogEntry[]> {
  const writer = new JobLogWriter(dataDir, jobId);
  const out = lines.map((l) => writer.append(l)).filter((e): e is JobLogEntry => e !== null);
  await writer.close();
  return out;
}

/** The lines of a job's log after line `afterSeq` (all of them by default); [] when it has no log. */
export async function readJobLog(dataDir: string, jobId: string, afterSeq = 0): Promise<JobLogEntry[]> {
  const file = jobLogPath(dataDir, jobId);
  if (!file) return [];
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const out: JobLogEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      const e = JSON.parse(line) as JobLogEntry;
      if (e.seq > afterSeq) out.push(e);
    } catch {
      // A line cut short by a crash mid-write: the lines around it stand.
    }
  }
  return out;
}

/** Removes a job's log file (its job was deleted). */
export async function removeJobLog(dataDir: string, jobId: string): Promise<void> {
  const file = jobLogPath(dataDir, jobId);
  if (file) await rm(file, { force: true });
}

/** Removes the job logs last written before `now - days`; returns how many. `days` 0 keeps everything. */
export async function pruneJobLogs(dataDir: string, days: number, now: Date = new Date()): Promise<number> {
  if (!(days > 0)) return 0;
  const dir = jobLogsDir(dataDir);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
  const cutoff = now.getTime() - days * 86_400_000;
  let removed = 0;
  for (const name of names) {
    if (!name.endsWith('.log')) continue;
    const file = join(dir, name);
    const info = await stat(file).catch(() => null);
    if (!info || info.mtimeMs >= cutoff) continue;
    await rm(file, { force: true });
    removed++;
  }
  return removed;
}
