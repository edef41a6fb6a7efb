/**
 * Drives the real `refdesk` command (bin/refdesk.js) as child processes for the end-to-end
 * tests. Every child is tracked so a suite can kill what is left in `after`, and every wait on
 * a child has a timeout, so a test run never hangs on a stuck process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testIssuerEnv } from '../helpers/licence.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'refdesk.js');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CliResult extends Exit {
  stdout: string;
  stderr: string;
}

/** A running `refdesk` process with its output collected as it arrives. */
export interface RefdeskProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited (at once if it already has). */
  exited(timeoutMs: number): Promise<Exit>;
  /** Resolves with the first match of `re` in the stream, waiting up to timeoutMs. */
  waitFor(stream: 'stdout' | 'stderr', re: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
}

const live = new Set<ChildProcess>();

export function makeDataDir(prefix = 'refdesk-e2e-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDataDir(dir: string | undefined): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
}

/** The environment of a child: a licence of the test issuer (test/helpers/licence.ts) unless `extra` sets one. */
export function cliEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  // REFDESK_WORKER_NICE 0: a server's ingest threads at the suite's priority (at nice 10 they would
  // wait behind the other test files' processes on a busy machine, and the suite take longer).
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', REFDESK_WORKER_NICE: '0', ...testIssuerEnv(), ...extra };
  // The child is not part of this test run.
  delete env.NODE_TEST_CONTEXT;
  return env;
}

export interface SpawnOptions {
  /**
   * `cli` (default): bin/refdesk.js <args>. `main`: the server's own entry (args unused):
   * server/main.ts through tsx, as `npm start` runs it, or its compiled twin dist/server/main.js
   * when the suite runs the compiled code (REFDESK_RUNTIME=dist, as bin/refdesk.js then does).
   */
  entry?: 'cli' | 'main';
  /** Run the child as this user and group (the test runs as root). */
  uid?: number;
  gid?: number;
}

function mainEntry(): string[] {
  const compiled = join(ROOT, 'dist', 'server', 'main.js');
  if (process.env.REFDESK_RUNTIME === 'dist' && existsSync(compiled)) return [compiled];
  return ['--import', 'tsx', join(ROOT, 'server', 'main.ts')];
}

/** Starts `refdesk <args>` on dataDir without waiting for it. */
export function spawnRefdesk(args: string[], dataDir: string, extraEnv: Record<string, string> = {}, options: SpawnOptions = {}): RefdeskProcess {
  const argv = options.entry === 'main' ? mainEntry() : [BIN, ...args];
  const ids = options.uid !== undefined ? { uid: options.uid, gid: options.gid ?? options.uid } : {};
  const child = spawn(process.execPath, argv, { cwd: ROOT, env: cliEnv(dataDir, extraEnv), stdio: ['ignore', 'pipe', 'pipe'], ...ids });
  live.add(child);
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const l of [...listeners]) l();
  };
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    out += c;
    notify();
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    err += c;
    notify();
  });
  let exit: Exit | null = null;
  const exitedP = new Promise<Exit>((resolve) => {
    // 'close' fires after the exit and after the output streams have ended.
    child.once('close', (code, signal) => {
      live.delete(child);
      exit = { code, signal };
      notify();
      resolve(exit);
    });
    child.once('error', (e) => {
      live.delete(child);
      err += `\n[spawn error] ${e.message}`;
      exit = { code: null, signal: null };
      notify();
      resolve(exit);
    });
  });
  const describe = () => `refdesk ${args.join(' ')} (pid ${child.pid})\n--- stdout ---\n${out}\n--- stderr ---\n${err}`;

  return {
    child,
    pid: child.pid ?? -1,
    stdout: () => out,
    stderr: () => err,
    exited(timeoutMs) {
      return withTimeout(exitedP, timeoutMs, () => `timed out after ${timeoutMs} ms waiting for ${describe()}`);
    },
    waitFor(stream, re, timeoutMs) {
      return new Promise<RegExpMatchArray>((resolve, reject) => {
        const check = () => {
          const m = (stream === 'stdout' ? out : err).match(re);
          if (m) return finish(() => resolve(m));
          if (exit) return finish(() => reject(new Error(`exited (${JSON.stringify(exit)}) before printing ${re} on ${stream}: ${describe()}`)));
        };
        const timer = setTimeout(() => finish(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${re} on ${stream}: ${describe()}`))), timeoutMs);
        const finish = (f: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          f();
        };
        listeners.add(check);
        check();
      });
    },
  };
}

/** Runs `refdesk <args>` to its end; kills it (and fails) when it takes longer than timeoutMs. */
export async function runRefdesk(args: string[], dataDir: string, timeoutMs = 60_000, extraEnv: Record<string, string> = {}, options: SpawnOptions = {}): Promise<CliResult> {
  const p = spawnRefdesk(args, dataDir, extraEnv, options);
  try {
    const exit = await p.exited(timeoutMs);
    return { ...exit, stdout: p.stdout(), stderr: p.stderr() };
  } catch (e) {
    await stopProcess(p.child);
    throw e;
  }
}

/** SIGTERM, then SIGKILL if it has not exited after graceMs. Resolves with how it ended. */
export async function stopProcess(child: ChildProcess, graceMs = 4000): Promise<Exit> {
  if (child.exitCode !== null || child.signalCode !== null) {
    live.delete(child);
    return { code: child.exitCode, signal: child.signalCode };
  }
  const ended = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const hard = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), graceMs);
  });
  let exit = await Promise.race([ended, hard]);
  clearTimeout(timer);
  if (!exit) {
    child.kill('SIGKILL');
    exit = await withTimeout(ended, 5000, () => `pid ${child.pid} did not die on SIGKILL`).catch(() => ({ code: null, signal: 'SIGKILL' as const }));
  }
  live.delete(child);
  return exit;
}

/** Kills every child still running (for `after` hooks). */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((c) => stopProcess(c)));
}

/** A running `refdesk serve` on dataDir, once it has printed its port. */
export interface RefdeskServer extends RefdeskProcess {
  port: number;
  base: string;
  /** The Authorization header of the server's local admin token (DATA_DIR/cli-token), as the CLI sends it. */
  adminAuth: { authorization: string };
  /** SIGTERM and wait (SIGKILL after a grace period). */
  stop(): Promise<Exit>;
}

export async function startServer(dataDir: string, timeoutMs = 30_000, extraEnv: Record<string, string> = {}): Promise<RefdeskServer> {
  const p = spawnRefdesk(['serve'], dataDir, extraEnv);
  let m: RegExpMatchArray;
  try {
    m = await p.waitFor('stdout', /Refdesk listening on port (\d+)/, timeoutMs);
  } catch (e) {
    await stopProcess(p.child);
    throw e;
  }
  const port = Number(m[1]);
  const adminAuth = { authorization: `Bearer ${readFileSync(join(dataDir, 'cli-token'), 'utf8').trim()}` };
  return Object.assign(p, { port, base: `http://127.0.0.1:${port}`, adminAuth, stop: () => stopProcess(p.child) });
}

/** fetch with a timeout; answers the status and the body as text (and parsed when JSON). */
export async function httpGet(url: string, timeoutMs = 15_000, headers: Record<string, string> = {}): Promise<{ status: number; text: string; body: any }> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, text, body: type.includes('json') ? JSON.parse(text) : undefined };
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(what())), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The snippets of a `context --json` answer (code and info), with their source. */
export interface SourceRef {
  path: string;
  lineStart: number;
  lineEnd: number;
}

export function snippetSources(json: { codeSnippets?: Array<{ source: SourceRef }>; infoSnippets?: Array<{ source: SourceRef }> }): SourceRef[] {
  return [...(json.codeSnippets ?? []), ...(json.infoSnippets ?? [])].map((s) => s.source);
}
