/**
 * `refdesk demo` without LICENSE_KEY: a licence from a throwaway local issuer generated into the
 * demo's data directory (DATA_DIR/demo-issuer), trusted through this process's own
 * LICENSE_ISSUER_KEYS, and the server bound to 127.0.0.1. Good for this machine only.
 */
import { join } from 'node:path';
import { prepareDataDir } from '../core/data-lock.ts';
import { demoIssuer, throwawayLicenceEnv } from './licence-throwaway.ts';
import { DEFAULT_HOST, type ProcessSettings } from './env.ts';

export async function useDemoLicence(settings: ProcessSettings, env: NodeJS.ProcessEnv): Promise<void> {
  // The data directory's own checks first (a file, not writable, ...): their message, not ours.
  await prepareDataDir(settings.dataDir);
  const dir = join(settings.dataDir, 'demo-issuer');
  const licence = throwawayLicenceEnv('Refdesk demo', { issuer: demoIssuer(dir), existingIssuerKeys: env.LICENSE_ISSUER_KEYS });
  Object.assign(env, licence);
  const host = env.HOST?.trim() || DEFAULT_HOST;
  if (host !== DEFAULT_HOST) process.stderr.write(`Demo licence: HOST=${host} is ignored; the demo answers this machine only.\n`);
  env.HOST = DEFAULT_HOST;
  process.stderr.write(
    `Demo licence: no LICENSE_KEY, so the demo uses a 30-day key from a throwaway local issuer (${dir}), trusted by this process only, and listens on ${DEFAULT_HOST}. For a real installation set LICENSE_KEY (docs/licence.md).\n`,
  );
}
