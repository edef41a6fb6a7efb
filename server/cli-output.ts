/**
 * The CLI's terminal output on stderr: a progress line redrawn in place, messages printed above
 * it, and a summary of what an ingest skipped. Off a terminal every line is printed as is.
 */
import type { LogLevel } from '../core/contracts.ts';

/** What the output needs of a stream (process.stderr, or a test's fake terminal). */
export interface OutputStream {
  isTTY?: boolean;
  columns?: number;
  write(chunk: string): unknown;
}

const CLEAR_LINE = '\r\x1b[K';

/** Cuts a line to the terminal's width so the progress line never wraps (a wrapped line cannot be redrawn). */
export function fitWidth(line: string, columns: number): string {
  const first = line.split('\n')[0];
  const max = Math.max(20, columns - 1);
  return first.length <= max ? first : first.slice(0, max - 1) + '…';
}

/**
 * A status (progress) line at the bottom of a terminal. `print` clears it, prints the message
 * and draws it again, so messages and progress never share a line.
 */
export class StatusLine {
  private current = '';
  private lastPlain = 0;

  constructor(
    private readonly out: OutputStream,
    /** Off a terminal, progress lines are printed at most this often. */
    private readonly plainIntervalMs = 2000,
  ) {}

  get isTTY(): boolean {
    return this.out.isTTY === true;
  }

  private get columns(): number {
    return this.out.columns && this.out.columns > 0 ? this.out.columns : 100;
  }

  /**
   * A message above the status line. On a terminal with `fit` (readable messages) it is cut to
   * one row; JSON lines are printed whole. Off a terminal it is printed as is.
   */
  print(message: string, fit = true): void {
    if (!this.isTTY) {
      this.out.write(message + '\n');
      return;
    }
    const shown = fit ? fitWidth(message, this.columns) : message;
    this.out.write(`${CLEAR_LINE}${shown}\n${this.current ? fitWidth(this.current, this.columns) : ''}`);
  }

  /** Replaces the status line (off a terminal: prints it, at most every plainIntervalMs). */
  update(line: string): void {
    if (!this.isTTY) {
      const now = Date.now();
      if (now - this.lastPlain < this.plainIntervalMs) return;
      this.lastPlain = now;
      this.out.write(line + '\n');
      return;
    }
    this.current = line;
    this.out.write(`${CLEAR_LINE}${fitWidth(line, this.columns)}`);
  }

  /** Leaves the last status line in place and moves below it. */
  done(): void {
    if (this.isTTY && this.current) this.out.write('\n');
    this.current = '';
  }
}

/** Why a document was skipped, from a source's or the ingest's warning text. */
const SKIP_REASONS: Array<[RegExp, string]> = [
  [/over the per-file limit/, 'over the per-file size limit'],
  [/is encrypted/, 'encrypted'],
  [/unsupported (zip compression|tar entry)/, 'unsupported archive entry'],
  [/target does not exist/, 'broken symlink'],
  [/points outside|symbolic link to a place outside/, 'symlink out of the folder'],
  [/symbolic link to a special file|is a special file/, 'special file'],
  [/loops back/, 'symlink loop'],
  [/cannot be (read|opened)/, 'unreadable'],
  [/no longer a regular file/, 'changed while read'],
  [/not a text file/, 'not a text file'],
  [/gave this path twice/, 'duplicate path'],
  [/chunker failed/, 'chunker failed'],
  [/marked it unchanged/, 'missing from the served build'],
];

function skipReason(text: string): string {
  for (const [re, reason] of SKIP_REASONS) if (re.test(text)) return reason;
  const plain = text.replace(/\s*\([^)]*\)/g, '').replace(/\d+/g, 'N').trim();
  return plain.length > 60 ? plain.slice(0, 59) + '…' : plain;
}

const SKIPPED = /^skipped (?:folder |symlink )?(.+?): (.+)$/i;
const INCLUDES = /^(.+?): (?:an include directive was|\d+ include directives were) left as written/;

/**
 * Collects an ingest's warnings and sums them up at the end: skipped documents by reason, the
 * documents whose include directives were left as written, and how many other warnings there were.
 */
export class WarningSummary {
  private readonly skipped = new Map<string, string[]>();
  private readonly includes: string[] = [];
  private others = 0;

  constructor(private readonly namesShown = 3) {}

  add(level: LogLevel, message: string): void {
    if (level !== 'warn' && level !== 'error') return;
    const skip = SKIPPED.exec(message);
    if (skip) {
      const reason = skipReason(skip[2]);
      const names = this.skipped.get(reason) ?? [];
      names.push(skip[1]);
      this.skipped.set(reason, names);
      return;
    }
    const inc = INCLUDES.exec(message);
    if (inc) {
      this.includes.push(inc[1]);
      return;
    }
    if (level === 'warn') this.others++;
  }

  private names(list: readonly string[]): string {
    const shown = list.slice(0, this.namesShown).join(', ');
    return list.length > this.namesShown ? `${shown} and ${list.length - this.namesShown} more` : shown;
  }

  /** The summary, one line each (none when nothing was worth a warning). */
  lines(): string[] {
    const out: string[] = [];
    const total = [...this.skipped.values()].reduce((n, l) => n + l.length, 0);
    if (total > 0) {
      const byCount = [...this.skipped].sort((a, b) => b[1].length - a[1].length);
      out.push(`Skipped ${total} ${total === 1 ? 'file' : 'files'}:`);
      for (const [reason, list] of byCount) out.push(`  ${list.length} ${reason}: ${this.names(list)}`);
    }
    if (this.includes.length > 0) {
      const n = this.includes.length;
      out.push(`${n} ${n === 1 ? 'file' : 'files'} with include directives left as written (targets not in the source): ${this.names(this.includes)}`);
    }
    if (this.others > 0) out.push(`${this.others} other ${this.others === 1 ? 'warning' : 'warnings'} (above).`);
    return out;
  }
}

/** What a followed job's printer needs (the CLI's ingest output). */
export interface JobUpdateOutput {
  logger: { warn(message: string, fields?: Record<string, unknown>): void };
  progress(p: { files: number; snippets: number; elapsedMs: number }): void;
}

/**
 * Prints what a job followed elsewhere (a server, another node) did since `seen.seq`: its new
 * warnings above the progress line, and its progress.
 */
export function showJobUpdate(
  output: JobUpdateOutput,
  seen: { seq: number },
  job: { progress: { files?: number; snippets?: number }; startedAt: string | null },
  log: ReadonlyArray<{ seq: number; level: LogLevel; message: string }>,
  fields: Record<string, unknown>,
): void {
  for (const line of log) {
    if (line.seq <= seen.seq) continue;
    seen.seq = line.seq;
    if (line.level === 'warn') output.logger.warn(line.message, fields);
  }
  output.progress({ files: job.progress.files ?? 0, snippets: job.progress.snippets ?? 0, elapsedMs: job.startedAt ? Date.now() - Date.parse(job.startedAt) : 0 });
}
