/**
 * The server process: the only file that reads process.env and listens.
 */
import { createServer } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import { createKernel } from '../core/kernel.ts';
import { createConsoleLogger } from '../core/services.ts';
import { isRefdeskError } from '../core/errors.ts';
import type { RuntimeEnv } from '../core/contracts.ts';
import { readSettings } from './env.ts';
import { createApp } from './app.ts';

async function main(): Promise<void> {
  const settings = readSettings();
  const logger = createConsoleLogger(settings.logLevel);
  const env: RuntimeEnv = { dataDir: settings.dataDir, mode: 'server', port: settings.port };
  const kernel = await createKernel(settings.configFile, { env, logger });

  // Listen first so the data-directory lock records the real port (PORT=0 picks a free one);
  // requests wait for the store to open.
  let handler: ((req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void) | null = null;
  const pending: Array<() => void> = [];
  const debugLoop = eventLoopDebugRoute(process.env.REFDESK_DEBUG_EVENT_LOOP === '1');
  const server = createServer((req, res) => {
    if (debugLoop?.(req, res)) return;
    return handler ? handler(req, res) : pending.push(() => handler!(req, res));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  env.port = (server.address() as AddressInfo).port;
  try {
    await kernel.open();
  } catch (e) {
    server.close();
    throw e;
  }
  const { app, jobs } = createApp(kernel, { mcp: { bindHost: settings.host } });
  handler = app.callback();
  for (const p of pending.splice(0)) p();
  await jobs.resumeQueued();
  logger.info(`Refdesk listening on http://${settings.host === '0.0.0.0' ? '127.0.0.1' : settings.host}:${env.port}`, { dataDir: settings.dataDir });
  process.stdout.write(`Refdesk listening on port ${env.port} (data: ${settings.dataDir})\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`received ${signal}, shutting down`);
    server.close();
    server.closeAllConnections();
    await jobs.stop();
    await kernel.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
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
  return (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): boolean => {
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

main().catch((e) => {
  process.stderr.write(`refdesk: ${isRefdeskError(e) ? e.message : (e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
