import { resolve } from 'node:path';
import { defaultConfigPath } from '../core/config.ts';
import { RefdeskError } from '../core/errors.ts';

/** The environment every entry point reads (server and CLI alike). */
export interface ProcessSettings {
  port: number;
  host: string;
  dataDir: string;
  configFile: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
}

export function readSettings(env: NodeJS.ProcessEnv = process.env): ProcessSettings {
  const portRaw = env.PORT ?? '3000';
  if (!/^\d{1,5}$/.test(portRaw) || Number(portRaw) > 65535) throw new RefdeskError('invalid_request', `PORT must be a number from 0 to 65535.`);
  const level = (env.LOG_LEVEL ?? 'info') as ProcessSettings['logLevel'];
  if (!['debug', 'info', 'warn', 'error'].includes(level)) throw new RefdeskError('invalid_request', 'LOG_LEVEL must be debug, info, warn or error.');
  return {
    port: Number(portRaw),
    host: env.HOST ?? '0.0.0.0',
    dataDir: resolve(env.DATA_DIR ?? './data'),
    configFile: resolve(env.REFDESK_CONFIG ?? defaultConfigPath()),
    logLevel: level,
  };
}
