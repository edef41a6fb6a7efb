/**
 * Fuzzes the real server: starts `refdesk serve` as a child process on a temporary data
 * directory (loopback only) with a small library indexed, sends generated requests over every
 * route and method (scripts/fuzz/requests.ts, the operator routes of issue 19 included, some with an admin key) on raw sockets, and prints JSON: answers by status
 * class, the answers >= 500 (with the first few requests that got them), errors the server
 * logged, and whether the process stayed alive. Exits 1 on any 5xx, logged request failure,
 * unhandled rejection or crash.
 *
 *   npm run fuzz [-- --requests N] [--seed S] [--concurrency C]
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { throwawayLicenceEnv } from '../server/licence-throwaway.ts';
import { Dice, generateRequest, listRoutes, prng, type FuzzContext, type FuzzRequest } from './fuzz/requests.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'refdesk.js');
const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '10000' },
    seed: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '8' },
    'timeout-ms': { type: 'string', default: '30000' },
    keep: { type: 'boolean', default: false },
  },
});
const total = Number(values.requests);
const seed = Number(values.seed);
const concurrency = Number(values.concurrency);
const timeoutMs = Number(values['timeout-ms']);
if (!Number.isInteger(total) || total < 1 || !Number.isInteger(seed) || !Number.isInteger(concurrency) || concurrency < 1) {
  process.stderr.write('usage: npm run fuzz -- [--requests N] [--seed S] [--concurrency C]\n');
  process.exit(2);
}

/**
 * The default config (`extends: default`, so the compiled build in dist/ loads its own plugins
 * too) with rate limits out of the way (the fuzz is one client).
 */
function writeConfig(dir: string): string {
  const file = join(ROOT, 'config', 'default.yaml');
  const { rateLimits } = parseYaml(readFileSync(file, 'utf8')) as { rateLimits: { plans: Record<string, unknown> } };
  const config = { extends: 'default', rateLimits: { anonymous: { requests: 100_000_000 }, plans: Object.fromEntries(Object.keys(rateLimits.plans).map((k) => [k, { requests: 100_000_000 }])) } };
  const out = join(dir, 'refdesk.yaml');
  writeFileSync(out, JSON.stringify(config, null, 2));
  return out;
}

function writeLibrary(dir: string): string {
  const docs = join(dir, 'fuzzlib');
  mkdirSync(join(docs, 'guide'), { recursive: true });
  writeFileSync(join(docs, 'README.md'), '# Fuzzlib\n\nFuzzlib makes widgets.\n\n## Install\n\n```bash\nnpm install fuzzlib\n```\n\n## Configure the server\n\nSet `port` and `host` in `fuzz.config.json`.\n');
  writeFileSync(join(docs, 'guide', 'errors.md'), '# Errors\n\n## Retries\n\nWrap calls with `retry(fn, { attempts: 3 })` to handle errors with retries.\n\n```ts\nimport { retry } from "fuzzlib";\nawait retry(() => widget.build(), { attempts: 3 });\n```\n');
  writeFileSync(join(docs, 'guide', 'tokens.md'), '# Token budget\n\nThe token budget caps the size of an answer; ask for `tokens=500` for a short one.\n');
  return docs;
}

interface Reply {
  status: number | null;
  timedOut: boolean;
  head: string;
}

/** Sends one request on a raw socket and reads the answer until the server closes the connection. */
function send(port: number, r: FuzzRequest): Promise<Reply> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      finish();
    }, timeoutMs);
    function finish() {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      // Interim answers (100 Continue) come before the answer.
      const text = Buffer.concat(chunks).subarray(0, 4000).toString('latin1').replace(/^(HTTP\/1\.[01] 1\d\d[^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n)+/, '');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      done({ status: m ? Number(m[1]) : null, timedOut, head: text.slice(0, 400) });
    }
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', finish);
    socket.on('error', finish);
    socket.on('connect', () => {
      const headers = [...r.headers];
      if (!r.rawFraming && (r.body.length > 0 || !['GET', 'HEAD'].includes(r.method))) headers.push(['Content-Length', String(r.body.length)]);
      const head = Buffer.from(`${r.method} ${r.target} HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`, 'latin1');
      if (r.mode === 'abort') {
        socket.write(Buffer.concat([head, r.body.subarray(0, Math.floor(r.body.length / 2))]), () => setTimeout(finish, 5));
        return;
      }
      socket.write(Buffer.concat([head, r.body]), () => {
        if (r.mode === 'halfClose') socket.end();
      });
    });
  });
}

function describe(r: FuzzRequest): string {
  const target = r.target.length > 160 ? `${r.target.slice(0, 160)}…(${r.target.length} chars)` : r.target;
  const body = r.body.length > 120 ? `${r.body.subarray(0, 120).toString('latin1')}…(${r.body.length} bytes)` : r.body.toString('latin1');
  return `${r.method} ${JSON.stringify(target)} [${r.tags.join(', ')}] body=${JSON.stringify(body)}`;
}

async function waitForPort(child: ChildProcess, stderr: () => string): Promise<number> {
  return new Promise((ok, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`the server did not start within 60 s: ${stderr().slice(-2000)}`)), 60_000);
    child.stdout!.on('data', (c) => {
      out += String(c);
      const m = /listening on port (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`the server exited with code ${code}: ${stderr().slice(-2000)}`));
    });
  });
}

async function jsonCall(port: number, method: string, path: string, body: unknown, auth: Record<string, string> = {}): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/**
 * A web UI session for the page routes: the factory account signs in, sets its own password
 * (a fresh server asks for it) and skips the setup wizard, as an operator would.
 */
async function signIn(port: number): Promise<{ cookie: string; csrfToken: string }> {
  const base = `http://127.0.0.1:${port}`;
  let cookie = '';
  const call = async (path: string, body: string, type: string, csrf?: string) => {
    const res = await fetch(base + path, { method: 'POST', redirect: 'manual', headers: { 'content-type': type, origin: base, ...(cookie ? { cookie } : {}), ...(csrf ? { 'x-csrf-token': csrf } : {}) }, body });
    const set = res.headers.getSetCookie().map((c) => c.split(';')[0]).find((c) => c.startsWith('refdesk_session='));
    if (set) cookie = set;
    if (res.status >= 400) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res;
  };
  const login = (await (await call('/api/auth/login', JSON.stringify({ username: 'admin', password: 'refdesk' }), 'application/json')).json()) as { csrfToken: string };
  await call('/api/auth/credentials', JSON.stringify({ currentPassword: 'refdesk', newPassword: 'fuzz-operator-password-1' }), 'application/json', login.csrfToken);
  const now = (await (await fetch(`${base}/api/auth/session`, { headers: { cookie } })).json()) as { csrfToken: string };
  await call('/setup', new URLSearchParams({ _csrf: now.csrfToken, step: 'llm', action: 'skip-all' }).toString(), 'application/x-www-form-urlencoded');
  return { cookie, csrfToken: now.csrfToken };
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'refdesk-fuzz-'));
  const dataDir = join(work, 'data');
  // A licence from a throwaway local issuer (no vendor key needed to fuzz).
  const licence = throwawayLicenceEnv('Refdesk fuzz', { existingIssuerKeys: process.env.LICENSE_ISSUER_KEYS });
  const env: NodeJS.ProcessEnv = { ...process.env, ...licence, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', REFDESK_CONFIG: writeConfig(work), NODE_NO_WARNINGS: '1' };
  delete env.NODE_TEST_CONTEXT;
  const libraryId = '/docs/fuzzlib';
  const added = spawnSync(process.execPath, [BIN, 'add', writeLibrary(work), '--name', 'fuzzlib'], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 });
  if (added.status !== 0) throw new Error(`indexing the fuzz library failed: ${added.stderr}`);

  const child = spawn(process.execPath, [BIN, 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  let exit: { code: number | null; signal: string | null } | null = null;
  child.once('exit', (code, signal) => (exit = { code, signal }));
  const stop = async () => {
    if (exit) return;
    const ended = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([ended, new Promise((r) => setTimeout(r, 5000))]);
    if (!exit) child.kill('SIGKILL');
  };
  try {
    const port = await waitForPort(child, () => stderr);
    // The server's local admin token (as the CLI sends it) creates the keys.
    const cli = { authorization: `Bearer ${readFileSync(join(dataDir, 'cli-token'), 'utf8').trim()}` };
    const memberKey = (await jsonCall(port, 'POST', '/api/admin/keys', { name: 'fuzz-member' }, cli)).key as string;
    const adminKey = (await jsonCall(port, 'POST', '/api/admin/keys', { name: 'fuzz-admin', role: 'admin' }, cli)).key as string;
    const jobIds = ((await (await fetch(`http://127.0.0.1:${port}/api/jobs`, { headers: cli })).json()) as { jobs?: Array<{ id: string }> }).jobs?.map((j) => j.id) ?? [];
    const session = await signIn(port);
    const ctx: FuzzContext = { port, memberKey, adminKey, libraryId, jobIds, session };
    const check = await fetch(`http://127.0.0.1:${port}/api/v2/context?libraryId=${libraryId}&query=install&type=json`, { headers: { authorization: `Bearer ${memberKey}` } });
    const checkBody = (await check.json()) as { codeSnippets?: unknown[]; infoSnippets?: unknown[] };
    const snippets = (checkBody.codeSnippets?.length ?? 0) + (checkBody.infoSnippets?.length ?? 0);
    if (check.status !== 200 || snippets === 0) throw new Error(`the fuzz library does not answer: ${check.status}`);

    const routes = listRoutes(await (await fetch(`http://127.0.0.1:${port}/api/openapi.json`)).json());
    const dice = new Dice(prng(seed));
    const byClass: Record<string, number> = {};
    const byStatus: Record<string, number> = {};
    // Per route, the statuses its requests got: shows which routes were reached past the guards.
    const byRoute: Record<string, Record<string, number>> = {};
    const serverErrors: Array<{ status: number; request: string; answer: string }> = [];
    let serverErrorCount = 0;
    let timeouts = 0;
    const timeoutSamples: string[] = [];
    const noAnswerSamples: string[] = [];
    let sent = 0;
    let next = 0;
    const started = Date.now();
    const worker = async () => {
      while (next < total && !exit) {
        next++;
        const r = generateRequest(dice, routes, ctx);
        const reply = await send(port, r);
        sent++;
        if (r.mode === 'abort') {
          byClass.aborted = (byClass.aborted ?? 0) + 1;
          continue;
        }
        if (reply.status === null && !reply.timedOut && noAnswerSamples.length < 5) noAnswerSamples.push(describe(r));
        if (reply.timedOut) {
          timeouts++;
          if (timeoutSamples.length < 5) timeoutSamples.push(describe(r));
        }
        const cls = reply.status === null ? (reply.timedOut ? 'timeout' : 'noAnswer') : `${Math.floor(reply.status / 100)}xx`;
        byClass[cls] = (byClass[cls] ?? 0) + 1;
        if (reply.status !== null) {
          byStatus[reply.status] = (byStatus[reply.status] ?? 0) + 1;
          const route = (byRoute[r.route] ??= {});
          route[reply.status] = (route[reply.status] ?? 0) + 1;
        }
        if (reply.status !== null && reply.status >= 500) {
          serverErrorCount++;
          if (serverErrors.length < 10) serverErrors.push({ status: reply.status, request: describe(r), answer: reply.head });
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const seconds = (Date.now() - started) / 1000;
    let alive = !exit;
    if (alive) {
      try {
        alive = (await fetch(`http://127.0.0.1:${port}/ping`, { signal: AbortSignal.timeout(15_000) })).status === 200;
      } catch {
        alive = false;
      }
    }
    const logged = stderr.split('\n').filter((l) => l.startsWith('{'));
    // Request failures only: ingest jobs of the generated libraries fail by design (hosts that do not exist).
    const loggedErrors = logged.filter((l) => /"level":"error"/.test(l) && /"message":"(request failed|connection failed|unhandled promise rejection)/.test(l));
    const unhandled = logged.filter((l) => /unhandled promise rejection/.test(l));
    const result = {
      command: `npm run fuzz -- --requests ${total} --seed ${seed} --concurrency ${concurrency}`,
      requests: sent,
      seed,
      seconds: Math.round(seconds * 10) / 10,
      routes: routes.map((r) => `${r.method} ${r.path}`),
      byClass,
      byStatus,
      byRoute,
      serverErrors: serverErrorCount,
      firstServerErrors: serverErrors,
      timeouts,
      firstTimeouts: timeoutSamples,
      // Connections closed without an answer (mostly framing Node's HTTP parser refuses by closing).
      firstNoAnswers: noAnswerSamples,
      loggedErrors: loggedErrors.length,
      firstLoggedErrors: loggedErrors.slice(0, 5).map((l) => l.slice(0, 600)),
      unhandledRejections: unhandled.length,
      // Anything else the server wrote to stderr (not its JSON log lines), e.g. Koa's default error printout.
      otherStderrLines: stderr.split('\n').filter((l) => l.trim() && !l.startsWith('{')).length,
      firstOtherStderr: [...new Set(stderr.split('\n').filter((l) => /^\s*\w*Error\b/.test(l)).map((l) => l.trim()))].slice(0, 10),
      processAlive: alive,
      exit,
      ...(alive ? {} : { stderrTail: stderr.split('\n').filter((l) => !l.startsWith('{')).slice(-30) }),
    };
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    const failed = serverErrorCount > 0 || !alive || loggedErrors.length > 0 || unhandled.length > 0;
    process.exitCode = failed ? 1 : 0;
  } finally {
    await stop();
    if (!values.keep) rmSync(work, { recursive: true, force: true });
    else process.stderr.write(`kept ${work}\n`);
  }
}

main().catch((e) => {
  process.stderr.write(`fuzz: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
