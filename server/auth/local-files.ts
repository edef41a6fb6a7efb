/**
 * Secrets the server keeps in DATA_DIR for whoever can read it (mode 0600):
 *
 * - `setup-token`: the one-time token that lets the factory credentials sign in from another
 *   machine (written at the first start while the account has its factory credentials, printed
 *   once, removed when the credentials are changed);
 * - `cli-token`: a random local admin token written at every server start, which the `refdesk`
 *   CLI sends as `Authorization: Bearer rdcli_...` to the running server's admin routes. It is
 *   not an API key (not in the key list) and is accepted on the operator routes only.
 */
import { randomBytes } from 'node:crypto';
import { chmod, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RefdeskError } from '../../core/errors.ts';

export const SETUP_TOKEN_FILE = 'setup-token';
export const CLI_TOKEN_FILE = 'cli-token';
export const CLI_TOKEN_PREFIX = 'rdcli_';

async function writeSecretFile(file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, text + '\n', { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, file);
}

async function readSecretFile(file: string): Promise<string | null> {
  try {
    const text = (await readFile(file, 'utf8')).trim();
    return text === '' ? null : text;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** The setup token, created when missing. `created` says whether this call wrote it. */
export async function ensureSetupToken(dataDir: string): Promise<{ token: string; created: boolean }> {
  const file = join(dataDir, SETUP_TOKEN_FILE);
  const existing = await readSecretFile(file);
  if (existing) return { token: existing, created: false };
  const token = randomBytes(24).toString('base64url');
  await writeSecretFile(file, token);
  return { token, created: true };
}

export function readSetupToken(dataDir: string): Promise<string | null> {
  return readSecretFile(join(dataDir, SETUP_TOKEN_FILE)).catch(() => null);
}

export async function removeSetupToken(dataDir: string): Promise<void> {
  await rm(join(dataDir, SETUP_TOKEN_FILE), { force: true });
}

/** Writes a new CLI token (replacing the previous server's) and returns it. */
export async function writeCliToken(dataDir: string): Promise<string> {
  const token = CLI_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  await writeSecretFile(join(dataDir, CLI_TOKEN_FILE), token);
  return token;
}

/** The CLI token of the server running on dataDir, or null when there is none. Throws when it cannot be read. */
export function readCliToken(dataDir: string): Promise<string | null> {
  return readSecretFile(join(dataDir, CLI_TOKEN_FILE));
}

/**
 * The Authorization header for the running server's admin routes: its local CLI token
 * (DATA_DIR/cli-token, readable by the user that runs the server).
 */
export async function adminAuthHeaders(dataDir: string): Promise<Record<string, string>> {
  let token: string | null;
  try {
    token = await readCliToken(dataDir);
  } catch (e) {
    throw new RefdeskError(
      'forbidden',
      `Cannot read ${dataDir}/cli-token (${(e as NodeJS.ErrnoException).code ?? 'unreadable'}): run this command as the user that runs the server, or use an admin API key over HTTP.`,
    );
  }
  if (!token) throw new RefdeskError('forbidden', `The server on ${dataDir} has not written ${dataDir}/cli-token (an older version, or it is still starting): restart it, or try again.`);
  return { authorization: `Bearer ${token}` };
}
