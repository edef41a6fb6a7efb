/**
 * Which Refdesk server the `refdesk mcp` command talks to, in this order:
 * 1. the `--server URL` flag, 2. the REFDESK_URL environment variable, 3. the server running on
 * DATA_DIR, found through the data directory's lock file (its port, on 127.0.0.1). The third is
 * looked up on every call, so starting or restarting the server later needs no MCP restart.
 */
import { RefdeskError } from '../../core/errors.ts';
import { readDataLock } from '../../core/data-lock.ts';

/** A checked base URL without a trailing slash: http(s), no credentials, no query or fragment. */
export function parseServerUrl(raw: string, from: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new RefdeskError('invalid_request', `${from} must be the URL of a Refdesk server, e.g. http://127.0.0.1:3000.`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new RefdeskError('invalid_request', `${from} must be an http:// or https:// URL.`);
  if (u.username || u.password) throw new RefdeskError('invalid_request', `${from} must not contain a user name or password; give the API key with --api-key or REFDESK_API_KEY.`);
  if (u.search || u.hash) throw new RefdeskError('invalid_request', `${from} must not have a query string or fragment: give the server's base URL, e.g. http://127.0.0.1:3000.`);
  return u.origin + u.pathname.replace(/\/+$/, '');
}

export interface ServerAddress {
  /** The base URL to use now (throws RefdeskError when no server can be found). */
  resolve(): Promise<string>;
  /** How the address is found, for the start-up message. */
  describe(): string;
}

export function serverAddress(opts: { flag?: string; env?: string; dataDir: string }): ServerAddress {
  if (opts.flag !== undefined) {
    const url = parseServerUrl(opts.flag, '--server');
    return { resolve: async () => url, describe: () => url };
  }
  if (opts.env !== undefined && opts.env.trim() !== '') {
    const url = parseServerUrl(opts.env, 'REFDESK_URL');
    return { resolve: async () => url, describe: () => `${url} (REFDESK_URL)` };
  }
  return {
    async resolve() {
      const lock = await readDataLock(opts.dataDir);
      if (lock && lock.mode === 'server' && lock.port) return `http://127.0.0.1:${lock.port}`;
      throw new RefdeskError(
        'internal_error',
        `No Refdesk server is running on the data directory ${opts.dataDir}. Start one (refdesk serve with the same DATA_DIR), or give its address with --server URL or REFDESK_URL.`,
      );
    },
    describe: () => `the Refdesk server running on ${opts.dataDir} (found through its lock file)`,
  };
}
