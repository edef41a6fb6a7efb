import { resolve } from 'node:path';
import { defaultConfigPath } from '../core/config.ts';
import { RefdeskError } from '../core/errors.ts';

/** Where the server listens unless HOST says otherwise: this machine only (a self-hosted dev tool). */
export const DEFAULT_HOST = '127.0.0.1';

/** The environment every entry point reads (server and CLI alike). */
export interface ProcessSettings {
  port: number;
  host: string;
  dataDir: string;
  configFile: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /**
   * How log lines are written on stderr: `json` (one JSON object a line) or `text` (short
   * readable lines). `LOG_FORMAT` chooses; without it, `text` when stderr is a terminal.
   */
  logFormat: 'json' | 'text';
}

export function readSettings(env: NodeJS.ProcessEnv = process.env, stderrIsTTY: boolean = process.stderr.isTTY === true): ProcessSettings {
  const portRaw = env.PORT ?? '3000';
  if (!/^\d{1,5}$/.test(portRaw) || Number(portRaw) > 65535) throw new RefdeskError('config_error', `PORT must be a number from 0 to 65535.`);
  const level = (env.LOG_LEVEL ?? 'info') as ProcessSettings['logLevel'];
  if (!['debug', 'info', 'warn', 'error'].includes(level)) throw new RefdeskError('config_error', 'LOG_LEVEL must be debug, info, warn or error.');
  const format = env.LOG_FORMAT?.trim() || (stderrIsTTY ? 'text' : 'json');
  if (format !== 'json' && format !== 'text') throw new RefdeskError('config_error', 'LOG_FORMAT must be json or text (unset: text on a terminal, json otherwise).');
  const host = env.HOST?.trim() || DEFAULT_HOST;
  if (/[\s/]/.test(host)) throw new RefdeskError('config_error', `HOST must be a host name or an IP address (e.g. 127.0.0.1, or 0.0.0.0 for every interface), without a scheme or port.`);
  return {
    port: Number(portRaw),
    host,
    dataDir: resolve(env.DATA_DIR ?? './data'),
    configFile: resolve(env.REFDESK_CONFIG ?? defaultConfigPath()),
    logLevel: level,
    logFormat: format,
  };
}

/**
 * The nice value of a server's ingest worker threads (core/worker-task.ts): `REFDESK_WORKER_NICE`,
 * 0 (as the main thread) to 19; unset: SERVER_WORKER_NICE.
 */
export function readWorkerNice(env: NodeJS.ProcessEnv, fallback: number): number {
  const raw = env.REFDESK_WORKER_NICE?.trim();
  if (!raw) return fallback;
  if (!/^\d{1,2}$/.test(raw) || Number(raw) > 19) throw new RefdeskError('config_error', 'REFDESK_WORKER_NICE must be a whole number from 0 (ingest threads as the main thread) to 19 (lowest priority).');
  return Number(raw);
}
