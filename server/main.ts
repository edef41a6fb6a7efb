/**
 * The server process: the only file that reads process.env and listens.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createKernel } from '../core/kernel.ts';
import { createConsoleLogger } from '../core/services.ts';
import { isRefdeskError } from '../core/errors.ts';
import type { RuntimeEnv } from '../core/contracts.ts';
import { readSettings } from './env.ts';
import { createApp } from './app.ts';

async function main(): Promise<void> {
  const startedAt = new Date();
  const settings = readSettings();
  const logger = createConsoleLogger(settings.logLevel);
  const env: RuntimeEnv = { dataDir: settings.dataDir, mode: 'server', port: settings.port };
  const kernel = await createKernel(settings.configFile, { env, logger });

  // Listen first so the data-directory lock records the real port (PORT=0 picks a free one);
  // requests wait for the store to open.
  let handler: ((req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void) | null = null;
  const pending: Array<() => void> = [];
  const server = createServer((req, res) => (handler ? handler(req, res) : pending.push(() => handler!(req, res))));
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
  await jobs.resumeQueued(startedAt);
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

main().catch((e) => {
  process.stderr.write(`refdesk: ${isRefdeskError(e) ? e.message : (e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
