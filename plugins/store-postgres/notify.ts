/**
 * The change feed between nodes (issue 24): what one node changed (a library's served build,
 * a setting, a revoked key...) reaches every other node's `PgDatabase.changes` within a second.
 *
 * - `publish()` (database.ts) adds a row to `changes` (migration 006) and, in the same
 *   statement, NOTIFYs `refdesk_changes` with `{seq, topic, id, node}`.
 * - Each node LISTENs on a dedicated `pg.Client` outside the pool (a pooled connection is shared
 *   and would drop the LISTEN). When that connection drops (server restart, a killed backend,
 *   a network cut) it reconnects with backoff, 250 ms doubling up to 10 s.
 * - Each node also polls `changes` for `seq > last` every `pollMs`: the fallback that delivers
 *   alone when LISTEN is off (`listen: false`) or silently useless (a pooler such as PgBouncer in
 *   transaction mode accepts LISTEN but never forwards notifications: run it in session mode), and
 *   the safety net that covers a listener's reconnection gap. It is one indexed query per
 *   `pollMs` per node.
 *
 * A change is delivered once per node whichever way it arrives first (its seq is remembered),
 * never to the node that made it (publish emits locally). Sequence numbers are allocated before
 * commit, so a row with a lower seq may become visible after a higher one: the poll keeps
 * reading rows younger than SETTLE_SECONDS and only moves its floor past settled ones.
 */
import pg from 'pg';
import type { Logger } from '../../core/contracts.ts';
import { toStoreError, type PostgresPool } from './pool.ts';

/** The NOTIFY channel of the change feed. */
export const CHANGE_CHANNEL = 'refdesk_changes';

export const CHANGE_TOPICS = ['library', 'settings', 'apiKey', 'session', 'job'] as const;
/**
 * What one node tells the others (and itself) after a change, by topic, with the id of what
 * changed: `library` (its record, versions or served build), `settings` (a key), `apiKey` (an id),
 * `session` (an id hash), `job` (an id: state, cancel request). Listeners run on every node,
 * the writer's included.
 */
export type ChangeTopic = (typeof CHANGE_TOPICS)[number];

/** Rows younger than this may still be joined by lower sequence numbers committing late. */
const SETTLE_SECONDS = 5;
/** Rows older than this are deleted (a node that was away longer reloads what it serves anyway). */
const KEEP = '1 hour';
const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 10_000;

/** The statement of `publish`: the row and its notification, at once. */
export const PUBLISH_SQL = `
WITH c AS (INSERT INTO changes (topic, id, node) VALUES ($2, $3, $4) RETURNING seq)
SELECT pg_notify($1, json_build_object('seq', seq, 'topic', $2::text, 'id', $3::text, 'node', $4::text)::text) FROM c`;

export interface ChangeFeedOptions {
  pool: PostgresPool;
  nodeId: string;
  logger: Logger;
  /** Poll interval, ms. */
  pollMs: number;
  /** LISTEN on a dedicated connection (false: polling only). */
  listen: boolean;
  applicationName: string;
  /** Where a change made by another node goes (PgDatabase.changes). */
  emit: (topic: ChangeTopic, id: string, node: string) => void;
}

interface ChangeRow {
  seq: string;
  topic: string;
  id: string;
  node: string;
  settled: boolean;
}

export class ChangeFeed {
  /** Every seq at or below it has been delivered (or is this node's own). */
  private floor = 0;
  /** Seqs above the floor already delivered. */
  private readonly seen = new Set<number>();
  private client: pg.Client | null = null;
  private listening = false;
  private pid: number | null = null;
  private stopped = false;
  private backoffMs = BACKOFF_MIN_MS;
  private pollTimer: NodeJS.Timeout | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private polls = 0;
  private pollFailing = false;
  /** Changes whose publish failed for want of a connection: sent by the next poll that works. */
  private readonly unsent: Array<[ChangeTopic, string]> = [];

  constructor(private readonly o: ChangeFeedOptions) {}

  /** Whether the LISTEN connection is up right now. */
  get isListening(): boolean {
    return this.listening;
  }

  /** The server process of the LISTEN connection (null while down), for diagnostics and tests. */
  get listenerPid(): number | null {
    return this.listening ? this.pid : null;
  }

  /** Starts after the newest change (older ones are not replayed), then listens and polls. */
  async start(): Promise<void> {
    const rows = await this.o.pool.withClient((c) => c.query<{ seq: string | null }>('SELECT max(seq) AS seq FROM changes'));
    this.floor = Number(rows.rows[0]?.seq ?? 0);
    if (this.o.listen) await this.connect();
    this.schedulePoll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearTimeout(this.pollTimer);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = null;
    this.listening = false;
    await this.polling?.catch(() => undefined);
    await client?.end().catch(() => undefined);
  }

  /**
   * Keeps a change that could not be published (the database is unreachable) and publishes it
   * with the next poll that works, so other nodes still learn of it (at most 10,000 are kept).
   */
  publishLater(topic: ChangeTopic, id: string, why: unknown): void {
    if (this.unsent.length === 0) this.o.logger.warn('store: a change could not be published; it will be when the database answers', { topic, error: toStoreError(why, this.o.pool.db).message });
    if (this.unsent.length >= 10_000) this.unsent.shift();
    this.unsent.push([topic, id]);
  }

  /** Polls now (tests; a poll already running is awaited instead). */
  pollNow(): Promise<void> {
    this.polling ??= this.poll().finally(() => {
      this.polling = null;
    });
    return this.polling;
  }

  private schedulePoll(): void {
    if (this.stopped) return;
    this.pollTimer = setTimeout(() => {
      void this.pollNow().finally(() => this.schedulePoll());
    }, this.o.pollMs);
    this.pollTimer.unref();
  }

  private async poll(): Promise<void> {
    try {
      while (this.unsent.length > 0) {
        const [topic, id] = this.unsent[0];
        await this.o.pool.withClient((c) => c.query(PUBLISH_SQL, [CHANGE_CHANNEL, topic, id, this.o.nodeId]));
        this.unsent.shift();
      }
      const { rows } = await this.o.pool.withClient((c) =>
        c.query<ChangeRow>(
          `SELECT seq, topic, id, node, at < now() - interval '${SETTLE_SECONDS} seconds' AS settled
             FROM changes WHERE seq > $1 ORDER BY seq LIMIT 10000`,
          [this.floor],
        ),
      );
      let floor = this.floor;
      let prefixSettled = true;
      for (const r of rows) {
        const seq = Number(r.seq);
        this.deliver(seq, r.topic, r.id, r.node);
        prefixSettled &&= r.settled;
        if (prefixSettled) floor = seq;
      }
      if (floor !== this.floor) {
        this.floor = floor;
        for (const s of this.seen) if (s <= floor) this.seen.delete(s);
      }
      if (++this.polls % 600 === 1) await this.o.pool.withClient((c) => c.query(`DELETE FROM changes WHERE at < now() - interval '${KEEP}'`));
      if (this.pollFailing) this.o.logger.info('store: change feed polling works again');
      this.pollFailing = false;
    } catch (e) {
      // The database is down: readiness says so; the next poll retries.
      if (!this.pollFailing) this.o.logger.warn('store: change feed poll failed', { error: toStoreError(e, this.o.pool.db).message });
      this.pollFailing = true;
    }
  }

  /** Emits one change unless it was delivered already or is this node's own. */
  private deliver(seq: number, topic: string, id: string, node: string): void {
    if (!Number.isSafeInteger(seq) || seq <= this.floor || this.seen.has(seq)) return;
    this.seen.add(seq);
    if (node === this.o.nodeId || !(CHANGE_TOPICS as readonly string[]).includes(topic)) return;
    try {
      this.o.emit(topic as ChangeTopic, id, node);
    } catch (e) {
      this.o.logger.error('store: a change listener failed', { topic, error: (e as Error).message });
    }
  }

  private onNotification(payload: string | undefined): void {
    let m: { seq?: unknown; topic?: unknown; id?: unknown; node?: unknown };
    try {
      m = JSON.parse(payload ?? '');
    } catch {
      return;
    }
    if (typeof m.topic !== 'string' || typeof m.id !== 'string' || typeof m.node !== 'string') return;
    this.deliver(Number(m.seq), m.topic, m.id, m.node);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.o.pool.db.url, application_name: `${this.o.applicationName} listener`, connectionTimeoutMillis: 10_000, keepAlive: true });
    let failed = false;
    const lost = (e?: Error) => {
      if (failed) return;
      failed = true;
      if (this.client === client) this.client = null;
      this.listening = false;
      void client.end().catch(() => undefined);
      if (this.stopped) return;
      this.o.logger.warn('store: change feed connection lost; polling until it is back', { error: e ? toStoreError(e, this.o.pool.db).message : 'connection ended' });
      this.scheduleReconnect();
    };
    // Without an 'error' listener a dropped connection would take the process down.
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (n) => {
      if (n.channel === CHANGE_CHANNEL) this.onNotification(n.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
      this.pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    } catch (e) {
      lost(e as Error);
      return;
    }
    if (this.stopped || failed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.listening = true;
    if (this.backoffMs > BACKOFF_MIN_MS) this.o.logger.info('store: change feed listening again');
    this.backoffMs = BACKOFF_MIN_MS;
    // What happened while the connection was down.
    void this.pollNow();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    const wait = this.backoffMs;
    this.backoffMs = Math.min(BACKOFF_MAX_MS, this.backoffMs * 2);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connect();
    }, wait);
    this.reconnectTimer.unref();
  }
}
