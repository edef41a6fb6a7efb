/**
 * Secrets at rest: source parameters marked `writeOnly` in a source's specSchema (git tokens,
 * Confluence API tokens, ...) are sealed with AES-256-GCM before the spec reaches the Store, and
 * opened only in memory when a job hands the spec to its Source. The key lives in
 * `<dataDir>/secret.key` (created on first use, mode 0600), or comes from ENCRYPTION_KEY (32
 * bytes, base64 or 64 hex digits) so several machines can share one database. REFDESK_SECRET_KEY
 * is the older name of ENCRYPTION_KEY and still read when ENCRYPTION_KEY is unset.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonSchema } from './define.ts';
import { RefdeskError } from './errors.ts';

const PREFIX = 'rdk-secret:v1:';
export const SECRET_KEY_FILE = 'secret.key';

export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PREFIX);
}

/** A box over a 32-byte key. */
export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new RefdeskError('config_error', 'The secret key must be 32 bytes.');
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64');
    },
    open(sealed) {
      if (!isSealed(sealed)) throw new RefdeskError('internal_error', 'A stored secret is not in the sealed format.');
      const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
        decipher.setAuthTag(raw.subarray(12, 28));
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      } catch {
        throw new RefdeskError(
          'internal_error',
          'A stored secret cannot be opened: the secret key changed (DATA_DIR/secret.key or ENCRYPTION_KEY). Set the key it was sealed with, or enter the secret again (the source\'s token, or the setting in PATCH /api/settings).',
        );
      }
    },
  };
}

/** Where a shared key comes from: its text and the variable that held it (for messages). */
export interface EnvSecretKey {
  value: string;
  name: string;
}

/** The shared key from the environment: ENCRYPTION_KEY, else the older REFDESK_SECRET_KEY; null when neither is set. */
export function envSecretKey(env: NodeJS.ProcessEnv = process.env): EnvSecretKey | null {
  if (env.ENCRYPTION_KEY) return { value: env.ENCRYPTION_KEY, name: 'ENCRYPTION_KEY' };
  if (env.REFDESK_SECRET_KEY) return { value: env.REFDESK_SECRET_KEY, name: 'REFDESK_SECRET_KEY' };
  return null;
}

/** 32 bytes from base64 or 64 hex digits; a config_error naming the variable otherwise (never its value). */
export function parseSecretKey(key: EnvSecretKey): Buffer {
  const text = key.value.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (bytes.length !== 32) {
    throw new RefdeskError('config_error', `${key.name} must be 32 bytes, written as base64 (44 characters) or 64 hex digits; create one with: openssl rand -base64 32`);
  }
  return bytes;
}

/**
 * The data directory's box: ENCRYPTION_KEY (or REFDESK_SECRET_KEY), else `<dataDir>/secret.key`,
 * created when missing. `envKey` overrides the environment (a string is taken as ENCRYPTION_KEY;
 * '' or null: no shared key).
 */
export function dataDirSecretBox(dataDir: string, envKey: string | EnvSecretKey | null = envSecretKey()): SecretBox {
  const shared = typeof envKey === 'string' ? (envKey ? { value: envKey, name: 'ENCRYPTION_KEY (or REFDESK_SECRET_KEY)' } : null) : envKey;
  // A shared key is checked at once: a bad ENCRYPTION_KEY stops the start, not a later request.
  let key: Buffer | null = shared ? parseSecretKey(shared) : null;
  const load = (): Buffer => {
    if (key) return key;
    const file = join(dataDir, SECRET_KEY_FILE);
    if (existsSync(file)) {
      key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    } else {
      mkdirSync(dataDir, { recursive: true });
      key = randomBytes(32);
      writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    }
    return key;
  };
  return {
    seal: (p) => createSecretBox(load()).seal(p),
    open: (s) => createSecretBox(load()).open(s),
  };
}

/** Top-level spec fields the schema marks `writeOnly`. */
export function secretFields(schema: JsonSchema): string[] {
  const props = (schema.properties ?? {}) as Record<string, { writeOnly?: boolean }>;
  return Object.keys(props).filter((k) => props[k]?.writeOnly === true);
}

/** A copy of the spec with its secret string fields sealed (already sealed values stay). */
export function sealSpec(schema: JsonSchema, spec: Record<string, unknown>, box: SecretBox): Record<string, unknown> {
  const out = { ...spec };
  for (const k of secretFields(schema)) {
    const v = out[k];
    if (typeof v === 'string' && v !== '' && !isSealed(v)) out[k] = box.seal(v);
  }
  return out;
}

/** A copy of the spec with its sealed fields opened, for the Source only. */
export function openSpec(schema: JsonSchema, spec: Record<string, unknown>, box: SecretBox): Record<string, unknown> {
  const out = { ...spec };
  for (const k of secretFields(schema)) if (isSealed(out[k])) out[k] = box.open(out[k] as string);
  return out;
}

/** A copy fit for showing: secret fields become "[set]" (never the value, sealed or not). */
export function redactSpec(schema: JsonSchema, spec: Record<string, unknown>): Record<string, unknown> {
  const out = { ...spec };
  for (const k of secretFields(schema)) if (out[k] !== undefined && out[k] !== '') out[k] = '[set]';
  return out;
}
