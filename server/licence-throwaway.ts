/**
 * A throwaway local issuer for the demo and the benchmark, fuzz and chaos scripts: a key pair made
 * on the spot and a key signed by it, trusted through the process's own LICENSE_ISSUER_KEYS.
 * Never a vendor key: such a licence is only good for the process it is handed to.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addDays, generateIssuerKeyPair, parseIssuerPrivateKey, privateKeyPem, signLicence, type IssuerKeyPair } from './licence-keys.ts';

export interface LicenceEnv {
  LICENSE_KEY: string;
  LICENSE_ISSUER_KEYS: string;
}

/** LICENSE_KEY and LICENSE_ISSUER_KEYS (the given list plus the throwaway issuer) for one process. */
export function throwawayLicenceEnv(licensee: string, opts: { days?: number; issuer?: IssuerKeyPair; existingIssuerKeys?: string } = {}): LicenceEnv {
  const issuer = opts.issuer ?? generateIssuerKeyPair();
  const now = new Date();
  const key = signLicence(issuer, { licensee, plan: 'local', trial: true, issuedAt: now, expiresAt: addDays(now, opts.days ?? 30) });
  const keys = [opts.existingIssuerKeys?.trim(), issuer.publicKey.line].filter(Boolean).join(',');
  return { LICENSE_KEY: key, LICENSE_ISSUER_KEYS: keys };
}

/** The demo's issuer, kept in `dir` (issuer.key 0600, issuer.pub) so restarts reuse it. */
export function demoIssuer(dir: string): IssuerKeyPair {
  const keyFile = join(dir, 'issuer.key');
  if (existsSync(keyFile)) return parseIssuerPrivateKey(readFileSync(keyFile, 'utf8'));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pair = generateIssuerKeyPair();
  writeFileSync(keyFile, privateKeyPem(pair.privateKey), { mode: 0o600 });
  writeFileSync(join(dir, 'issuer.pub'), pair.publicKey.line + '\n', { mode: 0o644 });
  return pair;
}
