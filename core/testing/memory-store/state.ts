/**
 * The in-memory store's tables and what its role classes share (core/testing/memory-store.ts):
 * one MemoryState per store, rows shaped like the embedded store's, and MemoryRole, the base of
 * each role class (open check, clock).
 */
import type { AdminAccountRecord, ApiKeyRecord, AuditEntry, BuildDocument, Clock, JobLogLine, JobState, SessionRecord, Snippet, StoredSnippet } from '../../contracts.ts';
import { RefdeskError } from '../../errors.ts';
import { snippetDefaults } from '../../store-rules.ts';
import type { LexicalIndex } from '../../search/lexical-index.ts';

export interface LibraryRow {
  id: string;
  title: string;
  description: string;
  branch: string;
  sourceKind: string;
  /** JSON, as the embedded store keeps it: what comes back is a copy without undefined values. */
  sourceSpec: string;
  stars: number;
  trustScore: number;
  benchmarkScore: number;
  createdAt: string;
}

export interface VersionRow {
  libraryId: string;
  version: string;
  activeBuildId: string;
  lastUpdateDate: string;
  totalTokens: number;
  totalSnippets: number;
}

export type BuildState = 'building' | 'finalized' | 'failed';

export interface BuildRow {
  id: string;
  libraryId: string;
  version: string;
  jobId: string | null;
  state: BuildState;
  startedAt: string;
  finishedAt: string | null;
  /** Insertion order, the tie-breaker the embedded store's rowid gives. */
  rowid: number;
  snippets: StoredSnippet[];
  documents: Map<string, BuildDocument>;
  byId: Map<number, StoredSnippet> | null;
  index: LexicalIndex | null;
}

export interface JobRow {
  id: string;
  libraryId: string;
  version: string;
  kind: string;
  state: JobState;
  progress: string;
  error: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  rowid: number;
  log: JobLogLine[];
}

export function parseJson<T>(text: string | null, fallback: T): T {
  if (typeof text !== 'string') return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** SQLite's BINARY collation (UTF-8 byte order, i.e. code point order), as `ORDER BY` uses it. */
export function binaryCompare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; ) {
    const ca = a.codePointAt(i)!;
    const cb = b.codePointAt(i)!;
    if (ca !== cb) return ca < cb ? -1 : 1;
    i += ca > 0xffff ? 2 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Newest first: `created_at DESC, rowid DESC`. */
export function newestFirst<T extends { rowid: number }>(key: (r: T) => string): (a: T, b: T) => number {
  return (a, b) => {
    const ka = key(a);
    const kb = key(b);
    if (ka !== kb) return ka < kb ? 1 : -1;
    return b.rowid - a.rowid;
  };
}

export function versionKey(libraryId: string, version: string): string {
  return JSON.stringify([libraryId, version]);
}

/** A copy of the snippet as the store keeps it (missing fields defaulted), not yet numbered. */
export function copySnippet(s: Snippet): Snippet {
  const breadcrumb = parseJson<string[]>(JSON.stringify(s.breadcrumb ?? []), []);
  return { ...snippetDefaults(s), breadcrumb: Object.freeze(breadcrumb) as string[] };
}

/** Everything one MemoryStore holds; `reset()` empties it (close). */
export class MemoryState {
  opened = false;
  closed = false;
  libraries = new Map<string, LibraryRow>();
  /** Served versions, by `versionKey`. */
  versions = new Map<string, VersionRow>();
  builds = new Map<string, BuildRow>();
  jobs = new Map<string, JobRow>();
  nextSnippetId = 1;
  nextRowid = 1;
  /** Settings as JSON text, as the embedded store keeps them. */
  settings = new Map<string, string>();
  apiKeys = new Map<string, ApiKeyRecord & { hash: string; rowid: number }>();
  aliases = new Map<string, string>();
  adminAccount: AdminAccountRecord | null = null;
  sessions = new Map<string, SessionRecord>();
  audit: AuditEntry[] = [];

  constructor(readonly clock: Clock) {}

  reset(): void {
    this.libraries = new Map();
    this.versions = new Map();
    this.builds = new Map();
    this.jobs = new Map();
    this.settings = new Map();
    this.apiKeys = new Map();
    this.aliases = new Map();
    this.adminAccount = null;
    this.sessions = new Map();
    this.audit = [];
  }
}

/** The base of the in-memory store's role classes. */
export abstract class MemoryRole {
  constructor(protected readonly state: MemoryState) {}

  protected now(): string {
    return this.state.clock.now().toISOString();
  }

  protected requireOpen(): void {
    if (!this.state.opened) {
      throw new RefdeskError('internal_error', this.state.closed ? 'The store is closed.' : 'The store is not open yet: call open() first.');
    }
  }
}
