/**
 * The trial issuer (`refdesk license serve-issuer`): its own process, so the signing key never
 * sits on a product server. One route:
 *
 *   POST /api/v2/license/trial  {email, organization}
 *     201 {licenseKey, expiresAt}   a 30-day trial key
 *     400 invalid_request           bad JSON, a bad email, no organization
 *     409 already_exists            this email (compared case-insensitively) already had a trial
 *     429 rate_limit_exceeded       too many requests from this address this hour (Retry-After)
 *
 * With a mailer (SMTP settings: server/licence-issuer-mail.ts) the key is mailed to the address
 * instead, and every valid request answers the same 202 {message}, byte for byte: a new email, an
 * email that already had its trial (its key is mailed again, at most once a day) and an email
 * mailed within the last day (nothing sent). So the answer never tells who asked before. The mail
 * goes out after the answer; a refused or failed send is logged (redacted) and the daily mark is
 * taken back so a later request can retry. The per-client-address 429 stays: it is decided before
 * the body is read, so it says nothing about any email.
 *
 * The issued trials are kept in a small JSON file (beside the signing key unless `statePath`),
 * written atomically (temp file, fsync, rename) before the key is answered. Requests are handled
 * one at a time, so two requests for one email cannot both get a key.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { open, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { addDays, signLicence, type IssuerKeyPair } from './licence-keys.ts';
import { RefdeskError } from '../core/errors.ts';
import type { TrialMailer } from './licence-issuer-mail.ts';

export const TRIAL_DAYS = 30;
export const TRIAL_PATH = '/api/v2/license/trial';
const MAX_BODY = 16 * 1024;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The one answer to every valid trial request when keys are mailed. */
export const MAILED_MESSAGE = 'If this address can have a trial, its key is on its way there by email (one trial per email address; a repeated request mails it again at most once a day). Check the inbox and the spam folder.';

export interface IssuerOptions {
  issuer: IssuerKeyPair;
  /** The issued-trials record (JSON). */
  statePath: string;
  /** Trial requests allowed per client address per hour (default 10). */
  perHour?: number;
  days?: number;
  now?: () => Date;
  /** Mail the keys (202 answers) instead of answering them (201). */
  mailer?: TrialMailer;
  /** The issuer log (default: info on stdout, errors on stderr). */
  log?: (level: 'info' | 'error', line: string) => void;
}

export type IssuerHandler = ((req: IncomingMessage, res: ServerResponse) => void) & {
  /** Resolves when no mail is being sent (for a clean shutdown). */
  idle(): Promise<void>;
};

const defaultLog = (level: 'info' | 'error', line: string) => (level === 'error' ? process.stderr : process.stdout).write(`licence issuer: ${line}\n`);

interface TrialRecord {
  organization: string;
  issuedAt: string;
  expiresAt: string;
  /** When the key was last mailed (mailing issuers only). */
  mailedAt?: string;
}

interface IssuerState {
  trials: Record<string, TrialRecord>;
}

export function defaultStatePath(signingKeyFile: string): string {
  return join(dirname(signingKeyFile), 'issued-trials.json');
}

async function readState(path: string): Promise<IssuerState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { trials: {} };
    throw e;
  }
  let state: IssuerState | null = null;
  try {
    state = JSON.parse(text) as IssuerState;
  } catch {
    /* reported below */
  }
  if (typeof state !== 'object' || state === null || typeof state.trials !== 'object' || state.trials === null) {
    throw new RefdeskError('config_error', `${path} is not an issued-trials record ({"trials": {...}}): restore it from a backup, or point --state at another file.`);
  }
  return state;
}

/** Writes the whole file beside itself, fsyncs, then renames over it: never a partial file. */
async function writeState(path: string, state: IssuerState): Promise<void> {
  const tmp = `${path}.${randomUUID()}.tmp`;
  const fh = await open(tmp, 'w', 0o600);
  try {
    await fh.writeFile(JSON.stringify(state, null, 2) + '\n');
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

// A pragmatic address check: one @, a non-empty local part, a dotted domain, no spaces or quotes.
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function validEmail(email: string): boolean {
  return email.length <= 254 && EMAIL.test(email) && email.split('@')[0].length <= 64;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new HttpError(413, 'too_large', `The request body is larger than ${MAX_BODY} bytes; send {"email": "...", "organization": "..."}.`));
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => reject(new HttpError(400, 'invalid_request', 'The request body ended early.')));
  });
}

/** Per-address sliding window over the last hour. */
class AddressLimiter {
  private readonly hits = new Map<string, number[]>();
  constructor(private readonly perHour: number) {}

  take(address: string, now: number): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const recent = (this.hits.get(address) ?? []).filter((t) => now - t < HOUR_MS);
    if (recent.length >= this.perHour) {
      this.hits.set(address, recent);
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((recent[0] + HOUR_MS - now) / 1000)) };
    }
    recent.push(now);
    this.hits.set(address, recent);
    // Forget idle addresses now and then so the map stays small.
    if (this.hits.size > 10_000) for (const [a, ts] of this.hits) if (!ts.some((t) => now - t < HOUR_MS)) this.hits.delete(a);
    return { ok: true };
  }
}

/** The issuer's request handler (no listening: see startIssuerServer). */
export function issuerHandler(opts: IssuerOptions): IssuerHandler {
  const now = opts.now ?? (() => new Date());
  const limiter = new AddressLimiter(opts.perHour ?? 10);
  const days = opts.days ?? TRIAL_DAYS;
  const log = opts.log ?? defaultLog;
  let queue: Promise<unknown> = Promise.resolve();
  const sending = new Set<Promise<void>>();

  /** Runs fn after every earlier record change: one at a time. */
  function serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = queue.then(fn);
    queue = run.catch(() => {});
    return run;
  }

  /** Sends in the background; on failure takes the daily mark back (if still ours) so a retry can mail. */
  function mailInBackground(mailer: TrialMailer, id: string, to: string, record: TrialRecord, licenseKey: string): void {
    const mark = record.mailedAt;
    const p = mailer
      .send({ to, organization: record.organization, licenseKey, expiresAt: record.expiresAt })
      .then(
        () => log('info', `mailed the trial key for ${id} (${record.organization})`),
        async (e: unknown) => {
          log('error', `could not mail the trial key for ${id} through ${mailer.describe}: ${mailer.redact((e as Error).message)}`);
          await serial(async () => {
            const state = await readState(opts.statePath);
            const rec = state.trials[id];
            if (rec && rec.mailedAt === mark) {
              delete rec.mailedAt;
              await writeState(opts.statePath, state);
            }
          }).catch((err: unknown) => log('error', `could not update ${opts.statePath}: ${(err as Error).message}`));
        },
      )
      .finally(() => sending.delete(p));
    sending.add(p);
  }

  async function trial(req: IncomingMessage): Promise<{ status: number; body: unknown }> {
    const limit = limiter.take(req.socket.remoteAddress ?? 'unknown', now().getTime());
    if (!limit.ok) {
      throw new HttpError(429, 'rate_limit_exceeded', `Too many trial requests from this address; try again in ${Math.ceil(limit.retryAfterSeconds / 60)} minutes.`, { 'retry-after': String(limit.retryAfterSeconds) });
    }
    const text = await readBody(req);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new HttpError(400, 'invalid_request', 'The body must be JSON: {"email": "you@example.com", "organization": "Your org"}.');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new HttpError(400, 'invalid_request', 'The body must be a JSON object: {"email": "you@example.com", "organization": "Your org"}.');
    }
    const { email: rawEmail, organization: rawOrg } = body as Record<string, unknown>;
    const email = typeof rawEmail === 'string' ? rawEmail.trim() : '';
    if (!validEmail(email)) throw new HttpError(400, 'invalid_request', 'Give a valid email address in "email" (e.g. you@example.com): the trial key is issued to it.');
    const organization = typeof rawOrg === 'string' ? rawOrg.trim() : '';
    if (!organization || organization.length > 200) throw new HttpError(400, 'invalid_request', 'Give the organization the trial is for in "organization" (1 to 200 characters).');
    const id = email.toLowerCase();
    const mailer = opts.mailer;
    if (mailer) {
      return serial(async () => {
        const state = await readState(opts.statePath);
        const at = now();
        let rec = state.trials[id];
        const isNew = !rec;
        if (!rec) {
          rec = { organization, issuedAt: at.toISOString(), expiresAt: addDays(at, days).toISOString() };
          state.trials[id] = rec;
        }
        // Ed25519 signatures are deterministic: the same record signs to the same key. Signed and
        // written whether or not it is mailed, so the answer takes about as long either way.
        const licenseKey = signLicence(opts.issuer, { licensee: rec.organization, email: id, plan: 'trial', trial: true, issuedAt: new Date(rec.issuedAt), expiresAt: new Date(rec.expiresAt) });
        const mailNow = !(rec.mailedAt && at.getTime() - Date.parse(rec.mailedAt) < DAY_MS);
        if (mailNow) {
          if (!isNew) log('info', `${id} asked again; mailing its trial key again`);
          rec.mailedAt = at.toISOString();
        } else {
          log('info', `${id} asked again; its trial key was mailed less than a day ago, not sent again`);
        }
        await writeState(opts.statePath, state);
        if (mailNow) mailInBackground(mailer, id, email, rec, licenseKey);
        return { status: 202, body: { message: MAILED_MESSAGE } };
      });
    }
    // One at a time from here: check the record, sign, write the record, answer.
    return serial(async () => {
      const state = await readState(opts.statePath);
      if (state.trials[id]) throw new HttpError(409, 'already_exists', 'This email address already had a trial key; one trial per email. Contact sales for a licence.');
      const issuedAt = now();
      const expiresAt = addDays(issuedAt, days);
      const licenseKey = signLicence(opts.issuer, { licensee: organization, email: id, plan: 'trial', trial: true, issuedAt, expiresAt });
      state.trials[id] = { organization, issuedAt: issuedAt.toISOString(), expiresAt: expiresAt.toISOString() };
      await writeState(opts.statePath, state);
      return { status: 201, body: { licenseKey, expiresAt: expiresAt.toISOString() } };
    });
  }

  const handler = ((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== TRIAL_PATH) {
      req.resume();
      return send(res, 404, { error: 'not_found', message: `No such route; trial keys are at POST ${TRIAL_PATH}.` });
    }
    if (req.method !== 'POST') {
      req.resume();
      return send(res, 405, { error: 'method_not_allowed', message: `Use POST ${TRIAL_PATH} with {"email", "organization"}.` }, { allow: 'POST' });
    }
    trial(req).then(
      ({ status, body }) => send(res, status, body),
      (e: unknown) => {
        req.resume();
        if (e instanceof HttpError) return send(res, e.status, { error: e.code, message: e.message }, e.headers);
        log('error', opts.mailer ? opts.mailer.redact((e as Error).message) : (e as Error).message);
        send(res, 500, { error: 'internal_error', message: 'The issuer could not record the trial; try again later.' });
      },
    );
  }) as IssuerHandler;
  handler.idle = async () => {
    while (sending.size > 0) await Promise.allSettled([...sending]);
    await queue;
  };
  return handler;
}

/** Starts the issuer on host:port; resolves once it listens. */
export async function startIssuerServer(opts: IssuerOptions & { host: string; port: number }): Promise<{ server: Server; handler: IssuerHandler }> {
  // Fail at start, not at the first request, when the record cannot be read.
  await readState(opts.statePath);
  const handler = issuerHandler(opts);
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  return { server, handler };
}
