/**
 * Licence keys, pure and offline (node:crypto Ed25519; no network, no clock of its own).
 *
 * A key is `rdk1.<payload>.<signature>`: the payload is the UTF-8 bytes of a JSON object
 * (`LicencePayload`), base64url; the signature is Ed25519 over exactly those bytes, base64url.
 * Verification checks the signature against every trusted issuer key before the payload bytes
 * are parsed, then checks that the payload names the issuer (`kid`) whose key verified it.
 *
 * An issuer public key is one line: `rdk-issuer-ed25519:<kid>:<base64 SPKI DER>`, where `kid` is
 * the first 16 hex digits of the SHA-256 of the DER. The private key is PKCS#8 PEM.
 *
 * This is an agreement check in open code, not copy protection: anyone can edit the check out.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { RefdeskError } from '../core/errors.ts';

export const KEY_PREFIX = 'rdk1';
export const ISSUER_PREFIX = 'rdk-issuer-ed25519';
/** Days before expiry from which the licence is `expiring` (a warning at start and on /api/license). */
export const EXPIRY_WARNING_DAYS = 7;
const DAY_MS = 86_400_000;

export interface LicencePayload {
  /** Payload format version. */
  v: 1;
  licensee: string;
  email?: string;
  plan: string;
  trial: boolean;
  /** ISO 8601 instants. */
  issuedAt: string;
  expiresAt: string;
  /** The issuer key id (see issuerKeyId). */
  kid: string;
}

export interface IssuerPublicKey {
  kid: string;
  key: KeyObject;
  /** The one-line form, as `keygen` writes it. */
  line: string;
}

export type LicenceState = 'valid' | 'expiring' | 'expired';

/** Why a key was refused: what is wrong with it, in a sentence without the key itself. */
export class LicenceKeyError extends RefdeskError {
  readonly reason: 'missing' | 'malformed' | 'tampered' | 'untrusted';
  constructor(reason: LicenceKeyError['reason'], message: string) {
    super('license_invalid', message);
    this.name = 'LicenceKeyError';
    this.reason = reason;
  }
}

const B64URL = /^[A-Za-z0-9_-]+$/;

function b64url(bytes: Buffer): string {
  return bytes.toString('base64url');
}

/** Decodes canonical base64url only (a re-encoding gives the same text): no padding, no other alphabet. */
function fromB64url(text: string): Buffer | null {
  if (!B64URL.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  return b64url(bytes) === text ? bytes : null;
}

/** The issuer key id: the first 16 hex digits of the SHA-256 of the SPKI DER. */
export function issuerKeyId(spkiDer: Buffer): string {
  return createHash('sha256').update(spkiDer).digest('hex').slice(0, 16);
}

export function formatIssuerPublicKey(key: KeyObject): string {
  const der = key.export({ type: 'spki', format: 'der' });
  return `${ISSUER_PREFIX}:${issuerKeyId(der)}:${der.toString('base64')}`;
}

/** Parses one `rdk-issuer-ed25519:<kid>:<base64 DER>` line; throws with what is wrong. */
export function parseIssuerPublicKey(line: string): IssuerPublicKey {
  const text = line.trim();
  const parts = text.split(':');
  if (parts.length !== 3 || parts[0] !== ISSUER_PREFIX) {
    throw new RefdeskError('config_error', `an issuer key must be one line "${ISSUER_PREFIX}:<kid>:<base64>" as refdesk license keygen writes it in issuer.pub`);
  }
  const [, kid, b64] = parts;
  if (!/^[0-9a-f]{16}$/.test(kid) || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) {
    throw new RefdeskError('config_error', `an issuer key's id must be 16 hex digits and its key base64 (copy the whole line of issuer.pub)`);
  }
  const der = Buffer.from(b64, 'base64');
  let key: KeyObject;
  try {
    key = createPublicKey({ key: der, format: 'der', type: 'spki' });
  } catch {
    throw new RefdeskError('config_error', `issuer key ${kid} is not a valid public key (the base64 part is damaged)`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new RefdeskError('config_error', `issuer key ${kid} is not an Ed25519 key`);
  if (issuerKeyId(der) !== kid) throw new RefdeskError('config_error', `issuer key ${kid}: the id does not match the key (the line was altered)`);
  return { kid, key, line: text };
}

/**
 * The issuer keys of a comma-separated list (LICENSE_ISSUER_KEYS); empty entries are ignored.
 * A bad entry throws naming its position and what is wrong, never the value.
 */
export function parseIssuerKeyList(list: string | undefined, name = 'LICENSE_ISSUER_KEYS'): IssuerPublicKey[] {
  const out: IssuerPublicKey[] = [];
  const entries = (list ?? '').split(',').map((s) => s.trim());
  entries.forEach((entry, i) => {
    if (!entry) return;
    try {
      out.push(parseIssuerPublicKey(entry));
    } catch (e) {
      throw new RefdeskError('config_error', `${name} entry ${i + 1} of ${entries.length}: ${(e as Error).message}. Separate several keys with commas.`);
    }
  });
  return out;
}

export interface IssuerKeyPair {
  privateKey: KeyObject;
  publicKey: IssuerPublicKey;
}

export function generateIssuerKeyPair(): IssuerKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKey: parseIssuerPublicKey(formatIssuerPublicKey(publicKey)) };
}

export function privateKeyPem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** Reads an issuer private key (PKCS#8 PEM, as `keygen` writes issuer.key). */
export function parseIssuerPrivateKey(pem: string): IssuerKeyPair {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw new RefdeskError('config_error', 'the signing key is not a PEM private key (use the issuer.key that refdesk license keygen wrote)');
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new RefdeskError('config_error', 'the signing key is not an Ed25519 key');
  return { privateKey, publicKey: parseIssuerPublicKey(formatIssuerPublicKey(createPublicKey(privateKey))) };
}

export interface LicenceTerms {
  licensee: string;
  email?: string;
  plan?: string;
  trial?: boolean;
  issuedAt: Date;
  expiresAt: Date;
}

/** Signs a licence key with an issuer's private key. */
export function signLicence(issuer: IssuerKeyPair, terms: LicenceTerms): string {
  const licensee = terms.licensee.trim();
  if (!licensee) throw new RefdeskError('invalid_request', 'a licence needs a licensee (--licensee NAME)');
  if (!(terms.expiresAt.getTime() > terms.issuedAt.getTime())) throw new RefdeskError('invalid_request', 'a licence must expire after it is issued');
  const payload: LicencePayload = {
    v: 1,
    licensee,
    ...(terms.email ? { email: terms.email } : {}),
    plan: terms.plan?.trim() || (terms.trial ? 'trial' : 'standard'),
    trial: terms.trial === true,
    issuedAt: terms.issuedAt.toISOString(),
    expiresAt: terms.expiresAt.toISOString(),
    kid: issuer.publicKey.kid,
  };
  const bytes = Buffer.from(JSON.stringify(payload), 'utf8');
  return `${KEY_PREFIX}.${b64url(bytes)}.${b64url(sign(null, bytes, issuer.privateKey))}`;
}

export interface VerifiedLicence {
  payload: LicencePayload;
  issuer: IssuerPublicKey;
}

/** The payload's fields checked after the signature (an issuer that signs nonsense is still refused). */
function checkPayload(value: unknown): LicencePayload {
  const bad = (what: string) => new LicenceKeyError('malformed', `LICENSE_KEY is signed but its contents are not a Refdesk licence (${what}); ask the issuer for a new key.`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('not an object');
  const p = value as Record<string, unknown>;
  if (p.v !== 1) throw bad('unknown format version');
  for (const f of ['licensee', 'plan', 'issuedAt', 'expiresAt', 'kid'] as const) {
    if (typeof p[f] !== 'string' || !(p[f] as string).trim()) throw bad(`no ${f}`);
  }
  if (p.email !== undefined && typeof p.email !== 'string') throw bad('email is not text');
  if (typeof p.trial !== 'boolean') throw bad('no trial flag');
  for (const f of ['issuedAt', 'expiresAt'] as const) {
    if (!Number.isFinite(Date.parse(p[f] as string))) throw bad(`${f} is not a date`);
  }
  return p as unknown as LicencePayload;
}

/**
 * Verifies a key against the trusted issuers: the signature over the payload's exact bytes
 * first, then the payload. Throws a LicenceKeyError saying whether the key is missing,
 * malformed, tampered with (signed by a trusted issuer, then altered) or from an untrusted issuer.
 * Expiry is not checked here (see licenceState).
 */
export function verifyLicence(key: string | undefined, trusted: readonly IssuerPublicKey[]): VerifiedLicence {
  const text = (key ?? '').trim();
  if (!text) throw new LicenceKeyError('missing', 'LICENSE_KEY is not set');
  const parts = text.split('.');
  if (parts.length !== 3 || parts[0] !== KEY_PREFIX) {
    throw new LicenceKeyError('malformed', `LICENSE_KEY is malformed (a Refdesk licence key looks like ${KEY_PREFIX}.<payload>.<signature>, one line; check that it was copied whole)`);
  }
  const bytes = fromB64url(parts[1]);
  const signature = fromB64url(parts[2]);
  if (!bytes || !signature || signature.length !== 64) {
    throw new LicenceKeyError('malformed', 'LICENSE_KEY is malformed (its payload or signature is not valid base64url, or it was cut short; check that it was copied whole)');
  }
  const issuer = trusted.find((t) => verify(null, bytes, t.key, signature));
  if (!issuer) {
    // Only for the message: which issuer the (unverified) key claims. Nothing else is read from it.
    let claimed: string | undefined;
    try {
      const kid = (JSON.parse(bytes.toString('utf8')) as { kid?: unknown }).kid;
      if (typeof kid === 'string' && /^[0-9a-f]{16}$/.test(kid)) claimed = kid;
    } catch {
      /* not JSON: reported as untrusted below */
    }
    if (claimed && trusted.some((t) => t.kid === claimed)) {
      throw new LicenceKeyError('tampered', `LICENSE_KEY has been altered: its signature does not match its contents (issuer ${claimed}); use the key exactly as issued`);
    }
    throw new LicenceKeyError('untrusted', `LICENSE_KEY is signed by an issuer this installation does not trust (issuer ${claimed ?? 'unknown'}); use a key from the Refdesk issuer, or add your issuer's public key to LICENSE_ISSUER_KEYS`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new LicenceKeyError('malformed', 'LICENSE_KEY is signed but its contents are not JSON; ask the issuer for a new key.');
  }
  const payload = checkPayload(parsed);
  if (payload.kid !== issuer.kid) {
    throw new LicenceKeyError('tampered', `LICENSE_KEY names issuer ${payload.kid.slice(0, 16)} but was signed by issuer ${issuer.kid}; ask the issuer for a new key.`);
  }
  return { payload, issuer };
}

/** Decodes a key's payload without trusting it (for `license show` of an untrusted key). */
export function decodeUnverified(key: string): LicencePayload | null {
  const parts = key.trim().split('.');
  if (parts.length !== 3 || parts[0] !== KEY_PREFIX) return null;
  const bytes = fromB64url(parts[1]);
  if (!bytes) return null;
  try {
    return checkPayload(JSON.parse(bytes.toString('utf8')));
  } catch {
    return null;
  }
}

export interface LicenceStatus {
  state: LicenceState;
  /** Whole days left until expiry, rounded up; 0 once expired. */
  daysLeft: number;
  /** A sentence for people when the licence is expiring or expired. */
  warning?: string;
}

/** The state of a licence at `now`. */
export function licenceState(payload: Pick<LicencePayload, 'expiresAt' | 'trial'>, now: Date): LicenceStatus {
  const left = Date.parse(payload.expiresAt) - now.getTime();
  const day = payload.expiresAt.slice(0, 10);
  const what = payload.trial ? 'trial licence' : 'licence';
  if (left <= 0) {
    return {
      state: 'expired',
      daysLeft: 0,
      warning: `The ${what} expired on ${day}: search, context, MCP and deleting keep working; adding, parsing, refreshing and policy changes answer 403 license_expired until LICENSE_KEY is renewed.`,
    };
  }
  const daysLeft = Math.ceil(left / DAY_MS);
  if (left <= EXPIRY_WARNING_DAYS * DAY_MS) {
    return { state: 'expiring', daysLeft, warning: `The ${what} expires on ${day} (${daysLeft} day${daysLeft === 1 ? '' : 's'} left): renew it and set LICENSE_KEY to the new key.` };
  }
  return { state: 'valid', daysLeft };
}

export function addDays(from: Date, days: number): Date {
  return new Date(from.getTime() + days * DAY_MS);
}
