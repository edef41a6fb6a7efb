/**
 * What the server does for sign-in at start (called by main.ts once the store is open): writes a
 * new local CLI token (DATA_DIR/cli-token), and while the admin account still has its factory
 * credentials makes sure the setup token exists (DATA_DIR/setup-token) and says how to sign in
 * first. A server bound to a non-loopback address with no allowed hosts says how to set them.
 */
import type { Kernel } from '../../core/kernel.ts';
import { isLoopbackHostname } from '../allowed-hosts.ts';
import { ensureSetupToken, writeCliToken } from './local-files.ts';
import { FACTORY_PASSWORD, FACTORY_USERNAME } from './passwords.ts';

export interface AuthStartup {
  cliToken: string;
  /** Lines for the operator (stdout, not the log). */
  notices: string[];
}

export async function prepareAuth(kernel: Kernel, opts: { dataDir: string; boundAddress: string; allowedHostCount: number }): Promise<AuthStartup> {
  const cliToken = await writeCliToken(opts.dataDir);
  const notices: string[] = [];
  if ((await kernel.store.getAdminAccount()) === null) {
    const { token } = await ensureSetupToken(opts.dataDir);
    notices.push(
      `First sign-in: user "${FACTORY_USERNAME}", password "${FACTORY_PASSWORD}" (POST /api/auth/login), then change them (POST /api/auth/credentials). ` +
        `From this machine that is enough; from another one also send the setup token ${token} as "setupToken" (kept in ${opts.dataDir}/setup-token until the credentials are changed).`,
    );
  }
  const a = opts.boundAddress;
  if (!isLoopbackHostname(a.includes(':') && !a.startsWith('[') ? `[${a}]` : a) && opts.allowedHostCount === 0) {
    notices.push(
      `Listening on ${a}, but no allowed hosts are set: sign-in and the admin routes answer only requests addressed to localhost or 127.0.0.1. ` +
        `Set ALLOWED_HOSTS to the names clients use (e.g. ALLOWED_HOSTS=docs.example.com,10.0.0.5) or server.allowedHosts in the config.`,
    );
  }
  return { cliToken, notices };
}
