/**
 * Secrets at rest: source parameters marked `writeOnly` in a source's specSchema (git tokens,
 * Confluence API tokens, ...) are sealed with AES-256-GCM before the spec reaches the Store, and
 * opened only in memory when a job hands the spec to its Source. The key lives in
 * `<dataDir>/secret.key` (created on first use, mode 0600), or comes from REFDESK_SECRET_KEY
 * (32 bytes, base64) so several machines can share one database.
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
          'A stored secret cannot be opened: the secret key changed (secret.key or REFDESK_SECRET_KEY). Add the source again with its token.',
        );
      }
    },
  };
}

/** The data directory's box: REFDESK_SECRET_KEY, else `<dataDir>/secret.key`, created when missing. */
export function dataDirSecretBox(dataDir: string, envKey = process.env.REFDESK_SECRET_KEY): SecretBox {
  let key: Buffer | null = null;
  const load = (): Buffer => {
    if (key) return key;
    if (envKey) {
      key = Buffer.from(envKey, 'base64');
      if (key.length !== 32) throw new RefdeskError('config_error', 'REFDESK_SECRET_KEY must be 32 bytes encoded as base64.');
      return key;
    }
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
