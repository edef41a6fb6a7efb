/**
 * The server process: the only file that reads process.env and listens.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createKernel } from '../core/kernel.ts';
import { createConsoleLogger } from '../core/services.ts';
import { prepareDataDir } from '../core/data-lock.ts';
import type { RuntimeEnv } from '../core/contracts.ts';
import { readSettings, type ProcessSettings } from './env.ts';
import { createApp } from './app.ts';
import { parseAllowedHosts } from './allowed-hosts.ts';
import { exitOnStartupFailure } from './startup-error.ts';
import { installProcessGuards } from './process-guards.ts';

/** `http://host:port` for an address the server is bound to (IPv6 in brackets). */
export function addressUrl(address: string, port: number): string {
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}

let settings: ProcessSettings | undefined;

async function main(): Promise<void> {
  settings = readSettings();
  const { dataDir } = settings;
  const allowedHosts = parseAllowedHosts(process.env.ALLOWED_HOSTS ?? '', 'ALLOWED_HOSTS');
  const logger = createConsoleLogger(settings.logLevel, undefined, { format: settings.logFormat });
  const env: RuntimeEnv = { dataDir, mode: 'server', port: settings.port };
  const kernel = await createKernel(settings.configFile, { env, logger });
  await prepareDataDir(dataDir);

  // Listen first so the data-directory lock records the real port (PORT=0 picks a free one);
  // requests wait for the store to open.
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const pending: Array<() => void> = [];
  const server = createServer((req, res) => (handler ? handler(req, res) : pending.push(() => handler!(req, res))));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings!.port, settings!.host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  env.port = bound.port;
  try {
    await kernel.open();
  } catch (e) {
    server.close();
    throw e;
  }
  const { app, jobs } = createApp(kernel, { mcp: { bindHost: settings.host }, allowedHosts });
  handler = app.callback();
  for (const p of pending.splice(0)) p();

  let stopping = false;
  const stop = async (why: string, code: number) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${why}, shutting down`);
    server.close();
    server.closeAllConnections();
    await jobs.stop().catch(() => {});
    await kernel.close().catch((e: unknown) => logger.error('could not close the store', { error: (e as Error).message }));
    process.exit(code);
  };
  process.on('SIGINT', () => void stop('received SIGINT', 0));
  process.on('SIGTERM', () => void stop('received SIGTERM', 0));
  installProcessGuards(process, logger, () => void stop('uncaught exception', 1));

  await jobs.resumeQueued();
  const url = addressUrl(bound.address, bound.port);
  const every = bound.address === '0.0.0.0' || bound.address === '::' ? ' (every interface)' : '';
  logger.info(`Refdesk listening on ${url}${every}`, { host: bound.address, port: bound.port, dataDir });
  process.stdout.write(`Refdesk listening on port ${bound.port} (${url}${every}, data: ${dataDir})\n`);
}

main().catch((e) => exitOnStartupFailure(e, settings ? { port: settings.port, host: settings.host } : {}));
