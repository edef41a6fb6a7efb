/**
 * Plugin test kit: the whole Store contract in memory, for tests that need a store without a
 * data directory. Nothing is persisted and there is no lock; otherwise it behaves like the
 * embedded store: the same library/version/job state derivation, build switch-over only on
 * `finalizeBuild`, `failBuild` keeping the served build, the same error codes and messages, and
 * the same lexical search (one BM25F index per served build, built on its first search).
 *
 * Everything handed in is copied and everything handed out is a fresh object (snippets are
 * frozen), so a test cannot change the store by mutating what it passed or got back.
 */
import type { Clock, Store, StoreLifecycle } from '../contracts.ts';
import { RefdeskError } from '../errors.ts';
import { systemClock } from '../services.ts';
import { delegateStoreRoles } from '../store-roles.ts';
import { MemoryApiKeys, MemoryAudit, MemorySessions } from './memory-store/access.ts';
import { MemoryBuilds } from './memory-store/builds.ts';
import { MemoryCatalog } from './memory-store/catalog.ts';
import { MemoryJobs } from './memory-store/jobs.ts';
import { MemorySettings } from './memory-store/settings.ts';
import { MemoryState } from './memory-store/state.ts';

export { MEMORY_JOB_LOG_LIMIT } from './memory-store/jobs.ts';

export interface MemoryStoreOptions {
  /** Where timestamps come from; the system clock unless given. */
  clock?: Clock;
}

/** The Store's methods, delegated to the role objects below (core/store-roles.ts). */
export interface MemoryStore extends Store {}

/**
 * The whole Store in memory: one object per role (core/testing/memory-store/) over one
 * MemoryState. Each role is usable alone (`store.jobs` is a JobStore).
 */
export class MemoryStore implements StoreLifecycle {
  private readonly state: MemoryState;
  readonly catalog: MemoryCatalog;
  readonly builds: MemoryBuilds;
  readonly jobs: MemoryJobs;
  readonly apiKeys: MemoryApiKeys;
  readonly sessions: MemorySessions;
  readonly audit: MemoryAudit;
  readonly settings: MemorySettings;

  constructor(options: MemoryStoreOptions = {}) {
    this.state = new MemoryState(options.clock ?? systemClock);
    this.catalog = new MemoryCatalog(this.state);
    this.builds = new MemoryBuilds(this.state, this.catalog);
    this.jobs = new MemoryJobs(this.state);
    this.apiKeys = new MemoryApiKeys(this.state);
    this.sessions = new MemorySessions(this.state);
    this.audit = new MemoryAudit(this.state);
    this.settings = new MemorySettings(this.state);
  }

  async open(): Promise<void> {
    if (this.state.opened) return;
    if (this.state.closed) throw new RefdeskError('internal_error', 'The store was closed; create a new one to open it again.');
    this.state.opened = true;
  }

  async close(): Promise<void> {
    this.state.opened = false;
    this.state.closed = true;
    this.state.reset();
  }
}

delegateStoreRoles(MemoryStore, {
  catalog: MemoryCatalog,
  builds: MemoryBuilds,
  jobs: MemoryJobs,
  apiKeys: MemoryApiKeys,
  sessions: MemorySessions,
  audit: MemoryAudit,
  settings: MemorySettings,
});
