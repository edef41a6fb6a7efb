/**
 * The chaos figure: `kill -9` the real server at seeded random moments while it ingests and
 * persists, restart it after each kill, and check that nothing is lost or damaged.
 *
 *   npm run chaos [-- --kills 50] [--seed 1] [--per-round 5] [--max-delay-ms 1500] [--corpora DIR]
 *
 * First a clean build: the server indexes a few small corpora of ../shared/corpora (uploaded
 * through POST /api/admin/upload, as `refdesk add` does) and answers a fixed list of questions
 * (the benchmark's first questions for those corpora). Then rounds, each on a fresh data
 * directory: the same uploads are sent while a timer kills the server (SIGKILL); after each kill
 * the database file is checked (sql.js `PRAGMA integrity_check`, plus the server must start on
 * it), the unfinished jobs are noted, the server is restarted and, at random, a corpus is
 * uploaded again (a rebuild over a served version), then killed again. At the end of a round the
 * server runs to the end: every job it accepted and every job a kill interrupted must succeed,
 * every answer must equal the clean build's, and no raw upload may be left in DATA_DIR/uploads.
 *
 * Prints one JSON object; exits 1 when any check fails.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { packForUpload } from '../server/pack.ts';
import { loadSqlJs } from '../plugins/store-embedded/sqlite.ts';
import { launchServer } from './bench/server-process.ts';
import { prng } from './fuzz/requests.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    kills: { type: 'string', default: '50' },
    seed: { type: 'string', default: '1' },
    'per-round': { type: 'string', default: '5' },
    'max-delay-ms': { type: 'string', default: '1500' },
    corpora: { type: 'string', default: join(ROOT, '..', 'shared', 'corpora') },
    questions: { type: 'string', default: join(ROOT, '..', 'shared', 'bench', 'questions.jsonl') },
  },
});
const int = (name: string, v: string | undefined, min: number): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(`chaos: --${name} must be an integer >= ${min}\n`);
    process.exit(2);
  }
  return n;
};
const KILLS = int('kills', values.kills, 1);
const SEED = int('seed', values.seed, 0);
const PER_ROUND = int('per-round', values['per-round'], 1);
const MAX_DELAY = int('max-delay-ms', values['max-delay-ms'], 10);
const CORPORA_DIR = resolve(values.corpora!);
/** Small corpora, so that a round is quick and kills land in every phase. */
const CORPORA = ['koa', 'tokio', 'zod'];
const QUESTIONS_PER_CORPUS = 5;
const DB_FILE = 'refdesk.sqlite';

const random = prng(SEED);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Server {
  child: ChildProcess;
  base: string;
  stderr(): string;
}

/** The running server's local admin token (DATA_DIR/cli-token, new at every start), as the CLI sends it. */
let adminAuth: Record<string, string> = {};

async function startServer(dataDir: string): Promise<Server> {
  const { child, baseUrl, stderr } = await launchServer(ROOT, dataDir, [join(ROOT, 'bin', 'refdesk.js'), 'serve']);
  adminAuth = { authorization: `Bearer ${readFileSync(join(dataDir, 'cli-token'), 'utf8').trim()}` };
  return { child, base: baseUrl, stderr };
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', () => r()));
}

async function kill9(server: Server): Promise<void> {
  server.child.kill('SIGKILL');
  await exited(server.child);
}

async function stopGracefully(server: Server): Promise<void> {
  server.child.kill('SIGTERM');
  const done = await Promise.race([exited(server.child).then(() => true), sleep(30_000).then(() => false)]);
  if (!done) await kill9(server);
}

async function json(res: Response): Promise<any> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return { text };
  }
}

const packs = new Map<string, Uint8Array<ArrayBuffer>>();
async function pack(corpus: string): Promise<Uint8Array<ArrayBuffer>> {
  let p = packs.get(corpus);
  if (!p) packs.set(corpus, (p = new Uint8Array(await packForUpload(join(CORPORA_DIR, corpus)))));
  return p;
}

/** Uploads a corpus as /docs/<corpus>; the job id, or null when the server did not accept it. */
async function upload(base: string, corpus: string): Promise<string | null> {
  try {
    const res = await fetch(`${base}/api/admin/upload?name=${corpus}`, { method: 'POST', body: new Blob([await pack(corpus)]), headers: { 'content-type': 'application/octet-stream', ...adminAuth } });
    const body = await json(res);
    return res.status === 202 ? (body.jobId as string) : null;
  } catch {
    return null; // killed while the request was in flight
  }
}

/** A job's state; a failed request is retried (the machine may be busy), unless the server exited. */
async function jobState(server: Server, id: string): Promise<{ state: string; error: { message: string } | null } | null> {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(`${server.base}/api/admin/jobs/${id}`, { headers: adminAuth });
      if (res.status !== 200) return null;
      return (await json(res)).job;
    } catch (e) {
      if (server.child.exitCode !== null || server.child.signalCode !== null) {
        throw new Error(`the server exited (${server.child.exitCode ?? server.child.signalCode}) while jobs ran: ${server.stderr().slice(-2000)}`);
      }
      if (attempt >= 5) throw e;
      await sleep(500 * attempt);
    }
  }
}

/** Waits until every job is succeeded or failed (or unknown); returns the final states. */
async function waitForJobs(server: Server, ids: Iterable<string>, timeoutMs = 600_000): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  const deadline = Date.now() + timeoutMs;
  for (const id of ids) {
    for (;;) {
      const job = await jobState(server, id);
      const state = job?.state ?? 'unknown';
      if (state !== 'queued' && state !== 'running') {
        states.set(id, state);
        break;
      }
      if (Date.now() > deadline) {
        states.set(id, `stuck:${state}`);
        break;
      }
      await sleep(100);
    }
  }
  return states;
}

async function createKey(base: string): Promise<string> {
  const res = await fetch(`${base}/api/admin/keys`, { method: 'POST', headers: { 'content-type': 'application/json', ...adminAuth }, body: JSON.stringify({ name: 'chaos' }) });
  return (await json(res)).key as string;
}

interface Question {
  corpus: string;
  question: string;
}

function questions(): Question[] {
  const lines = readFileSync(values.questions!, 'utf8').split('\n').filter(Boolean);
  const out: Question[] = [];
  for (const corpus of CORPORA) {
    const qs = lines.map((l) => JSON.parse(l) as { corpus: string; question: string }).filter((q) => q.corpus === corpus);
    out.push(...qs.slice(0, QUESTIONS_PER_CORPUS).map((q) => ({ corpus, question: q.question })));
  }
  return out;
}

/** The txt answers of every question (status and body), in order. */
async function answers(base: string, key: string, list: Question[]): Promise<string[]> {
  const out: string[] = [];
  for (const q of list) {
    const u = `${base}/api/v2/context?${new URLSearchParams({ libraryId: `/docs/${q.corpus}`, query: q.question })}`;
    // A GET is retried on a network error: a busy machine can reset a kept-alive connection.
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await fetch(u, { headers: { authorization: `Bearer ${key}` } });
        out.push(`${res.status}\n${await res.text()}`);
        break;
      } catch (e) {
        if (attempt >= 5) throw e;
        await sleep(500 * attempt);
      }
    }
  }
  return out;
}

/** Opens the database file as the server would read it: integrity and unfinished jobs. */
async function inspect(dataDir: string): Promise<{ ok: boolean; problem?: string; unfinished: string[] }> {
  const file = join(dataDir, DB_FILE);
  if (!existsSync(file)) return { ok: true, unfinished: [] };
  const SQL = await loadSqlJs();
  let db;
  try {
    db = new SQL.Database(readFileSync(file));
    const check = db.exec('PRAGMA integrity_check')[0]?.values?.[0]?.[0];
    if (check !== 'ok') return { ok: false, problem: String(check), unfinished: [] };
    const rows = db.exec("SELECT id FROM jobs WHERE state IN ('queued', 'running')")[0]?.values ?? [];
    return { ok: true, unfinished: rows.map((r) => String(r[0])) };
  } catch (e) {
    return { ok: false, problem: (e as Error).message, unfinished: [] };
  } finally {
    db?.close();
  }
}

/** For each file left in uploads: its age and the libraries and jobs that name it. */
async function explainUploads(dataDir: string): Promise<string> {
  const dir = join(dataDir, 'uploads');
  const SQL = await loadSqlJs();
  const db = new SQL.Database(readFileSync(join(dataDir, DB_FILE)));
  try {
    return readdirSync(dir)
      .map((name) => {
        const libs = db.exec(`SELECT id FROM libraries WHERE source_spec LIKE '%${name.replace(/'/g, '')}%'`)[0]?.values.map((r) => String(r[0])) ?? [];
        const jobs = libs.flatMap((l) => db.exec(`SELECT state, created_at, started_at, finished_at FROM jobs WHERE library_id = '${l}' ORDER BY created_at`)[0]?.values.map((r) => r.join(' ')) ?? []);
        return `${name} (${statSync(join(dir, name)).size} bytes, mtime ${statSync(join(dir, name)).mtime.toISOString()}; named by ${libs.join(', ') || 'no library'}; jobs: ${jobs.join(' | ')})`;
      })
      .join('; ');
  } finally {
    db.close();
  }
}

function leftoverUploads(dataDir: string): number {
  const dir = join(dataDir, 'uploads');
  return existsSync(dir) ? readdirSync(dir).length : 0;
}

async function cleanBuild(list: Question[]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-chaos-clean-'));
  try {
    const server = await startServer(dir);
    try {
      const ids = (await Promise.all(CORPORA.map((c) => upload(server.base, c)))) as string[];
      if (ids.some((id) => !id)) throw new Error('the clean build did not accept every upload');
      const states = await waitForJobs(server, ids);
      if ([...states.values()].some((s) => s !== 'succeeded')) throw new Error(`the clean build failed: ${JSON.stringify([...states])}`);
      return await answers(server.base, await createKey(server.base), list);
    } finally {
      await stopGracefully(server);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (!existsSync(CORPORA_DIR)) {
    process.stderr.write(`chaos: no corpora at ${CORPORA_DIR} (--corpora DIR)\n`);
    process.exit(2);
  }
  const started = Date.now();
  const list = questions();
  const reference = await cleanBuild(list);

  const result = {
    seed: SEED,
    kills: 0,
    rounds: 0,
    corpora: CORPORA,
    questions: list.length,
    corruptStores: 0,
    failedStarts: 0,
    killsDuringIngest: 0,
    interruptedJobs: 0,
    interruptedJobsCompleted: 0,
    acceptedJobs: 0,
    acceptedJobsSucceeded: 0,
    answersCompared: 0,
    answersDifferent: 0,
    leftoverUploads: 0,
    problems: [] as string[],
    seconds: 0,
  };

  while (result.kills < KILLS) {
    result.rounds++;
    const dir = mkdtempSync(join(tmpdir(), 'refdesk-chaos-'));
    const accepted = new Set<string>();
    const interrupted = new Set<string>();
    const served = new Set<string>();
    const restarts: string[] = [];
    try {
      let server = await startServer(dir);
      const killsThisRound = Math.min(PER_ROUND, KILLS - result.kills);
      let sending: Promise<unknown> = Promise.all(
        CORPORA.map(async (c) => {
          const id = await upload(server.base, c);
          if (id) accepted.add(id), served.add(c);
        }),
      );
      for (let k = 0; k < killsThisRound; k++) {
        await sleep(Math.floor(random() * MAX_DELAY));
        await kill9(server);
        result.kills++;
        await sending.catch(() => {});
        const state = await inspect(dir);
        if (!state.ok) {
          result.corruptStores++;
          result.problems.push(`round ${result.rounds} kill ${k + 1}: the database is damaged (${state.problem})`);
        }
        if (state.unfinished.length > 0) result.killsDuringIngest++;
        for (const id of state.unfinished) interrupted.add(id);
        try {
          server = await startServer(dir);
          restarts.push(new Date().toISOString());
        } catch (e) {
          result.failedStarts++;
          result.problems.push(`round ${result.rounds} kill ${k + 1}: the server did not start again: ${(e as Error).message.slice(0, 300)}`);
          throw e;
        }
        // At random, re-index a corpus (a rebuild beside a served version) before the next kill.
        sending = Promise.resolve();
        if (k + 1 < killsThisRound && random() < 0.5) {
          const c = CORPORA[Math.floor(random() * CORPORA.length)];
          sending = upload(server.base, c).then((id) => {
            if (id) accepted.add(id), served.add(c);
          });
        }
      }
      // The last restart runs to the end: uploads that never got through are sent again.
      await sending.catch(() => {});
      for (const c of CORPORA) {
        if (served.has(c)) continue;
        const id = await upload(server.base, c);
        if (id) accepted.add(id), served.add(c);
        else result.problems.push(`round ${result.rounds}: the upload of ${c} was refused after the last restart`);
      }
      const states = await waitForJobs(server, new Set([...accepted, ...interrupted]));
      for (const id of accepted) {
        result.acceptedJobs++;
        if (states.get(id) === 'succeeded') result.acceptedJobsSucceeded++;
        else result.problems.push(`round ${result.rounds}: accepted job ${id} ended ${states.get(id)}`);
      }
      for (const id of interrupted) {
        result.interruptedJobs++;
        if (states.get(id) === 'succeeded') result.interruptedJobsCompleted++;
        else result.problems.push(`round ${result.rounds}: interrupted job ${id} ended ${states.get(id)}`);
      }
      const got = await answers(server.base, await createKey(server.base), list);
      for (let i = 0; i < got.length; i++) {
        result.answersCompared++;
        if (got[i] !== reference[i]) {
          result.answersDifferent++;
          result.problems.push(`round ${result.rounds}: the answer to "${list[i].question.slice(0, 60)}" (${list[i].corpus}) differs from the clean build`);
        }
      }
      await sleep(1000); // a job's raw upload is removed just after its state is written
      const left = leftoverUploads(dir);
      result.leftoverUploads += left;
      await stopGracefully(server);
      if (left > 0) result.problems.push(`round ${result.rounds}: ${left} raw uploads left in DATA_DIR/uploads: ${await explainUploads(dir)}; restarts at ${restarts.join(', ')}`);
      const final = await inspect(dir);
      if (!final.ok) {
        result.corruptStores++;
        result.problems.push(`round ${result.rounds}: the database is damaged after a clean stop (${final.problem})`);
      }
    } catch (e) {
      result.problems.push(`round ${result.rounds}: ${(e as Error).message.slice(0, 500)}`);
      break;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    process.stderr.write(`chaos: round ${result.rounds}: ${result.kills}/${KILLS} kills, ${result.interruptedJobsCompleted}/${result.interruptedJobs} interrupted jobs completed, ${result.problems.length} problems, ${Math.round((Date.now() - started) / 1000)} s\n`);
  }
  result.seconds = Math.round((Date.now() - started) / 1000);
  const failed =
    result.problems.length > 0 ||
    result.corruptStores > 0 ||
    result.failedStarts > 0 ||
    result.interruptedJobsCompleted !== result.interruptedJobs ||
    result.acceptedJobsSucceeded !== result.acceptedJobs ||
    result.answersDifferent > 0 ||
    result.leftoverUploads > 0 ||
    result.kills < KILLS;
  process.stdout.write(JSON.stringify({ ok: !failed, ...result }, null, 2) + '\n');
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  process.stderr.write(`chaos: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
