/**
 * Liveness and readiness, for load balancers, orchestrators and the container's HEALTHCHECK:
 *
 *   GET /api/health  200 {status: 'ok'} whenever the process answers (nothing else is checked)
 *   GET /api/ready   200 when this node can serve: the store answers, the job runner runs and
 *                    DATA_DIR's file system has room; else 503 with the reasons. The licence is
 *                    reported (`license: 'valid' | 'expired'`) but never makes it 503: an
 *                    expired installation still serves reads, so a balancer must not drop it.
 *                    `store` says which store and, for one on a database (PostgreSQL, issue 24:
 *                    its `storeStatus()`), whether the database answers and is migrated; while
 *                    it is not, 503 with the store's error code (`database_unavailable`...).
 *
 * Both are public, cheap and answered before every other middleware (no rate limit, no key,
 * no Host check), like /ping.
 */
import { statfs } from 'node:fs/promises';
import type { Context, Next } from 'koa';
import type { Store } from '../../core/contracts.ts';
import type { LicenceView } from '../access.ts';

export interface ReadinessOptions {
  store: Store;
  dataDir: string;
  /** Whether the job runner still runs jobs (false once stopped). */
  jobsAlive: () => boolean;
  licence?: LicenceView;
  /** 503 below this many free bytes on DATA_DIR's file system; 0 turns the check off. */
  minFreeDiskBytes: number;
  /** Free bytes for the file system of a path (tests replace it); default fs.statfs. */
  freeBytes?: (path: string) => Promise<number>;
  /** The store's kind (config `slots.store`), for a store that does not report its own. */
  storeKind?: string;
}

/**
 * What a store on a database reports (plugins/store-postgres/readiness.ts): its kind, the
 * database's state and migrations, and the error while it is not usable. Never throws.
 */
export interface StoreStatus {
  kind: string;
  database?: string;
  error?: { error: string; message: string };
  [detail: string]: unknown;
}

function storeStatusOf(store: object): (() => Promise<StoreStatus>) | null {
  const fn = (store as { storeStatus?: unknown }).storeStatus;
  return typeof fn === 'function' ? () => (fn as () => Promise<StoreStatus>).call(store) : null;
}

export interface ReadyAnswer {
  ready: boolean;
  status: 'ready' | 'unavailable';
  license: 'valid' | 'expiring' | 'expired';
  /** Why the node is not ready (empty when ready), or why it is read-only (licence). */
  reasons: string[];
  checks: {
    store: 'ok' | 'failed';
    jobs: 'ok' | 'stopped';
    disk: { status: 'ok' | 'low' | 'unknown'; freeBytes: number | null; minFreeBytes: number };
  };
  store: StoreStatus;
}

async function statfsFree(path: string): Promise<number> {
  const s = await statfs(path);
  return Number(s.bavail) * Number(s.bsize);
}

/** The readiness of this node (never throws: a failing check is a reason). */
export async function readiness(o: ReadinessOptions): Promise<ReadyAnswer> {
  const reasons: string[] = [];
  let store: ReadyAnswer['checks']['store'] = 'ok';
  let storeStatus: StoreStatus = { kind: o.storeKind ?? 'embedded' };
  const status = storeStatusOf(o.store);
  if (status) {
    storeStatus = await status();
    if (storeStatus.error) {
      store = 'failed';
      reasons.push(`store: ${storeStatus.error.message}`);
    }
  } else {
    try {
      await o.store.getSetting('policy');
    } catch (e) {
      store = 'failed';
      reasons.push(`store: ${(e as Error).message}`);
    }
  }
  const jobs = o.jobsAlive() ? 'ok' : 'stopped';
  if (jobs === 'stopped') reasons.push('jobs: the job runner has stopped (the server is shutting down)');
  let disk: ReadyAnswer['checks']['disk'] = { status: 'unknown', freeBytes: null, minFreeBytes: o.minFreeDiskBytes };
  if (o.minFreeDiskBytes > 0) {
    try {
      const free = await (o.freeBytes ?? statfsFree)(o.dataDir);
      disk = { status: free >= o.minFreeDiskBytes ? 'ok' : 'low', freeBytes: free, minFreeBytes: o.minFreeDiskBytes };
      if (disk.status === 'low') reasons.push(`disk: ${free} bytes free in DATA_DIR, below server.minFreeDiskBytes (${o.minFreeDiskBytes}); free some space or grow the volume`);
    } catch (e) {
      reasons.push(`disk: cannot read the free space of DATA_DIR (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  } else disk = { status: 'ok', freeBytes: null, minFreeBytes: 0 };
  const ready = store === 'ok' && jobs === 'ok' && disk.status === 'ok';
  const expired = o.licence?.expired() === true;
  if (expired) {
    const when = o.licence?.expiresAt();
    reasons.push(`license: expired${when ? ` on ${when.slice(0, 10)}` : ''}; serving read-only (search, context, MCP, delete)`);
  }
  // The licence module's view says 'expiring' within 7 days of expiry (server/licence.ts).
  const state = (o.licence as { state?: () => string } | undefined)?.state?.();
  const license = expired ? 'expired' : state === 'expiring' ? 'expiring' : 'valid';
  return { ready, status: ready ? 'ready' : 'unavailable', license, reasons, checks: { store, jobs, disk }, store: storeStatus };
}

/** Answers /api/health and /api/ready (GET and HEAD); every other request goes on. */
export function healthMiddleware(o: ReadinessOptions) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.path !== '/api/health' && ctx.path !== '/api/ready') return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET, HEAD');
      ctx.body = { error: 'invalid_request', message: `${ctx.path} answers GET (or HEAD) only.` };
      return;
    }
    ctx.set('Cache-Control', 'no-store');
    if (ctx.path === '/api/health') {
      ctx.body = { status: 'ok' };
      return;
    }
    const answer = await readiness(o);
    ctx.status = answer.status === 'ready' ? 200 : 503;
    // A store that cannot reach its database says so in the error code (database_unavailable...).
    ctx.body = answer.ready ? answer : { error: answer.store.error?.error ?? 'not_ready', message: answer.reasons.join('; '), ...answer };
  };
}
