/**
 * The server process: the only file that reads process.env and listens.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import { createKernel } from '../core/kernel.ts';
import { createConsoleLogger, LogRing } from '../core/services.ts';
import { prepareDataDir } from '../core/data-lock.ts';
import { SERVER_WORKER_NICE, setWorkerNice } from '../core/worker-task.ts';
import type { RuntimeEnv } from '../core/contracts.ts';
import { readSettings, readWorkerNice, type ProcessSettings } from './env.ts';
import { createApp } from './app.ts';
import { parseAllowedHosts } from './allowed-hosts.ts';
import { parseTrustedProxies } from './trusted-proxies.ts';
import { exitOnStartupFailure } from './startup-error.ts';
import { ignoreBrokenStdio, installProcessGuards } from './process-guards.ts';
import { loadLicence, startLine } from './licence.ts';
import { prepareAuth } from './auth/startup.ts';

/** `http://host:port` for an address the server is bound to (IPv6 in brackets). */
export function addressUrl(address: string, port: number): string {
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}

let settings: ProcessSettings | undefined;

/**
 * For start-up measurements only, off unless REFDESK_DEBUG_START=1: one stderr line per step of
 * the start, `refdesk-start <step> wall=<ms since the process started> cpu=<ms of CPU so far, all
 * threads>` (docs/benchmark.md, "Compiled start").
 */
const traceStart = process.env.REFDESK_DEBUG_START === '1';
function startMark(step: string): void {
  if (!traceStart) return;
  const cpu = process.cpuUsage();
  process.stderr.write(`refdesk-start ${step} wall=${performance.now().toFixed(1)} cpu=${((cpu.user + cpu.system) / 1000).toFixed(1)}\n`);
}
startMark('imported');

async function main(): Promise<void> {
  const startedAt = new Date();
  settings = readSettings();
  // The licence first: a missing or invalid key starts nothing (one line, exit 1).
  const licence = loadLicence(process.env);
  const { dataDir } = settings;
  const allowedHosts = parseAllowedHosts(process.env.ALLOWED_HOSTS ?? '', 'ALLOWED_HOSTS');
  parseTrustedProxies(process.env.TRUSTED_PROXIES ?? '', 'TRUSTED_PROXIES'); // a bad value stops the start here
  // The last lines logged, redacted, for the support bundle (GET /api/support-bundle).
  const logRing = new LogRing(5000);
  const logger = createConsoleLogger(settings.logLevel, undefined, { format: settings.logFormat, ring: logRing });
  const env: RuntimeEnv = { dataDir, mode: 'server', port: settings.port };
  // Ingest's worker threads (chunking, segment builds) yield the cores to the event loop.
  setWorkerNice(readWorkerNice(process.env, SERVER_WORKER_NICE));
  const kernel = await createKernel(settings.configFile, { env, logger });
  startMark('createKernel');
  await prepareDataDir(dataDir);

  // Listen first so the data-directory lock records the real port (PORT=0 picks a free one);
  // requests wait for the store to open.
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const pending: Array<() => void> = [];
  const debugLoop = eventLoopDebugRoute(process.env.REFDESK_DEBUG_EVENT_LOOP === '1');
  let firstRequest = traceStart;
  const server = createServer((req, res) => {
    if (firstRequest) {
      firstRequest = false;
      res.once('finish', () => startMark('first response'));
    }
    if (debugLoop?.(req, res)) return;
    return handler ? handler(req, res) : pending.push(() => handler!(req, res));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings!.port, settings!.host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  env.port = bound.port;
  startMark('listening');
  try {
    await kernel.open();
  } catch (e) {
    server.close();
    throw e;
  }
  startMark('kernel.open');
  const configHosts = kernel.config.server?.allowedHosts ?? [];
  const authStart = await prepareAuth(kernel, { dataDir, boundAddress: bound.address, allowedHostCount: allowedHosts.length + configHosts.length });
  const { app, jobs, searchPool } = createApp(kernel, {
    mcp: { bindHost: settings.host },
    allowedHosts,
    access: { licence, cliToken: authStart.cliToken },
    trustedProxies: process.env.TRUSTED_PROXIES,
    supportBundle: { env: process.env, logRing, startedAt },
  });
  handler = app.callback();
  startMark('createApp');
  for (const p of pending.splice(0)) p();

  let stopping = false;
  const stop = async (why: string, code: number) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${why}, shutting down`);
    server.close();
    server.closeAllConnections();
    await jobs.stop().catch(() => {});
    await searchPool?.close().catch(() => {});
    await kernel.close().catch((e: unknown) => logger.error('could not close the store', { error: (e as Error).message }));
    process.exit(code);
  };
  process.on('SIGINT', () => void stop('received SIGINT', 0));
  process.on('SIGTERM', () => void stop('received SIGTERM', 0));
  installProcessGuards(process, logger, () => void stop('uncaught exception', 1));
  ignoreBrokenStdio();

  // The search workers' start (a search before it starts its worker itself) and the start's
  // housekeeping (queued jobs, re-chunk and embed checks, the uploads sweep) come after one turn
  // of the event loop, so requests held while the store opened (a waiting /ping) are answered
  // first instead of behind the workers' start and the housekeeping's synchronous store reads.
  await new Promise<void>((resolve) => setImmediate(resolve));
  if (stopping) return;
  searchPool?.start();
  try {
    await jobs.resumeQueued(startedAt);
  } catch (e) {
    if (stopping) return; // a SIGTERM during the start closed the store under it: not a failure to start
    throw e;
  }
  startMark('resumeQueued');
  const url = addressUrl(bound.address, bound.port);
  const every = bound.address === '0.0.0.0' || bound.address === '::' ? ' (every interface)' : '';
  logger.info(`Refdesk listening on ${url}${every}`, { host: bound.address, port: bound.port, dataDir });
  const licenceLine = startLine(licence);
  logger.log(licenceLine.level, licenceLine.message);
  // One write: whoever waits for the listening line has the sign-in notices with it.
  process.stdout.write([`Refdesk listening on port ${bound.port} (${url}${every}, data: ${dataDir})`, ...authStart.notices].join('\n') + '\n');
}

/**
 * For benchmarks only (scripts/bench-serve.ts), off unless REFDESK_DEBUG_EVENT_LOOP=1: the event
 * loop's delay since the last reading (perf_hooks.monitorEventLoopDelay, ms) on
 * `GET /debug/event-loop` from this machine; each reading starts a new window. Not part of the
 * API (not in createApp, not in the OpenAPI document).
 */
function eventLoopDebugRoute(enabled: boolean) {
  if (!enabled) return null;
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.url !== '/debug/event-loop' || req.method !== 'GET') return false;
    const from = req.socket.remoteAddress ?? '';
    if (!['127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(from)) return false;
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    const body = { count: h.count, meanMs: ms(h.mean || 0), p50Ms: ms(h.percentile(50)), p99Ms: ms(h.percentile(99)), maxMs: ms(h.max) };
    h.reset();
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
    return true;
  };
}

main().catch((e) => exitOnStartupFailure(e, settings ? { port: settings.port, host: settings.host } : {}));
