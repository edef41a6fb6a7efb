/**
 * Redaction of secrets from any text that leaves a job or a request: error messages, job log
 * lines, the process log. Two layers:
 *
 * - the exact secret values a job holds (the writeOnly fields of its opened spec: tokens, PATs,
 *   passwords) and their encodings (base64 of the value and of `user:value` for HTTP Basic,
 *   percent-encoding), removed wherever they appear, also inside any base64 run that decodes to
 *   text containing them;
 * - generic shapes that carry credentials whatever their value: Authorization / Cookie /
 *   Set-Cookie / API-key header values, `Bearer ...` and `Basic ...`, `token=...`-style query or
 *   form parameters, JSON fields named like secrets, and URL userinfo (`https://user:pass@host`).
 *
 * Upstream answers (headers, status text, bodies) are not to be echoed at all; `excerpt` gives
 * the most a message may quote of an upstream body: short, one line, redacted.
 */

/** What replaces a removed secret. */
export const REDACTED = '[redacted]';

/** Values shorter than this are not searched for (they would blank out ordinary words). */
const MIN_SECRET_LENGTH = 4;

/** Header names whose values are credentials. */
const CREDENTIAL_HEADER = /\b(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key|x-auth-token|private-token|x-access-token|refdesk_api_key|refdesk-api-key)(\s*[:=]\s*)("?)[^\r\n"]*/gi;
/** Auth schemes followed by their credentials. */
const AUTH_SCHEME = /\b(Bearer|Basic|Token)(\s+)([A-Za-z0-9._~+/=:-]{8,})/gi;
/** `name=value` parameters whose name says secret (query strings, forms, git config). */
const SECRET_PARAM = /\b((?:access_|private_|api_|auth_|refresh_|id_)?(?:token|key|secret|password|passwd|pwd|pat|apikey|api-key|signature|sessionid))=([^&\s"'<>;,]+)/gi;
/** JSON fields whose name says secret: `"apiToken": "..."`. */
const SECRET_JSON_FIELD = /("[A-Za-z_-]*(?:token|secret|password|passwd|authorization|cookie|api[_-]?key|pat)"\s*:\s*")((?:[^"\\]|\\.)*)"/gi;
/** Credentials in a URL: `scheme://user:pass@host` or `scheme://token@host`. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@'"<>]+@/gi;
/** A run long enough to be a base64 (or base64url) encoding worth decoding. */
const BASE64_RUN = /[A-Za-z0-9+/_-]{12,}={0,2}/g;

/**
 * A redactor for a fixed set of secret values (and the generic shapes). Build one per job or per
 * request with the secrets it holds; `redact(text)` is then cheap to call on every line.
 */
export interface Redactor {
  (text: string): string;
  /** The exact values (and encodings) this redactor removes, longest first. */
  readonly values: readonly string[];
}

/**
 * Every form in which `secret` may show up in text: the value, percent-encoded, base64 and
 * base64url of it, and base64 of `user:secret` for each given user name (HTTP Basic).
 */
export function secretForms(secret: string, users: readonly string[] = []): string[] {
  if (secret.length < MIN_SECRET_LENGTH) return [];
  const out = new Set<string>([secret, encodeURIComponent(secret)]);
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  out.add(b64(secret));
  out.add(b64(secret).replace(/=+$/, ''));
  out.add(Buffer.from(secret, 'utf8').toString('base64url'));
  for (const u of users) if (u !== '') out.add(b64(`${u}:${secret}`));
  // `user:secret` given as one value (a Bitbucket app password, git's user:token): each part too.
  if (secret.includes(':')) for (const part of secret.split(':')) if (part.length >= 8) out.add(part);
  return [...out].filter((s) => s.length >= MIN_SECRET_LENGTH);
}

/** Builds a redactor removing `secrets` (raw values; their encodings are added) and the generic shapes. */
export function createRedactor(secrets: Iterable<string> = [], users: readonly string[] = []): Redactor {
  const raw = [...new Set([...secrets].filter((s) => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH))];
  const values = [...new Set(raw.flatMap((s) => secretForms(s, users)))].sort((a, b) => b.length - a.length);
  const fn = ((text: string) => redactText(text, values, raw)) as Redactor;
  Object.defineProperty(fn, 'values', { value: values });
  return fn;
}

/** The generic redactor (no known secret values): for the process logger and request errors. */
export const redactGeneric: Redactor = createRedactor();

function redactText(input: string, values: readonly string[], raw: readonly string[]): string {
  if (typeof input !== 'string' || input === '') return input;
  let out = input;
  for (const v of values) if (out.includes(v)) out = out.split(v).join(REDACTED);
  if (raw.length > 0) {
    // A secret inside any base64 run (e.g. base64 of "x-access-token:<token>" at an offset).
    out = out.replace(BASE64_RUN, (run) => {
      const decoded = decodeBase64(run);
      return decoded !== null && raw.some((s) => decoded.includes(s)) ? REDACTED : run;
    });
  }
  return out
    .replace(URL_USERINFO, `$1${REDACTED}@`)
    .replace(CREDENTIAL_HEADER, (_m, name: string, sep: string, quote: string) => `${name}${sep}${quote}${REDACTED}`)
    .replace(AUTH_SCHEME, (m, scheme: string, space: string, cred: string) => (looksLikeCredential(cred) ? `${scheme}${space}${REDACTED}` : m))
    .replace(SECRET_PARAM, (_m, name: string) => `${name}=${REDACTED}`)
    .replace(SECRET_JSON_FIELD, (_m, head: string) => `${head}${REDACTED}"`);
}

/**
 * A word after "Bearer"/"Basic" is a credential when it has a digit or a symbol, mixes case past
 * its first letter, or is long; "Basic authentication" is prose.
 */
function looksLikeCredential(word: string): boolean {
  return /[0-9+/=_~.-]/.test(word) || (/[A-Z]/.test(word.slice(1)) && /[a-z]/.test(word)) || word.length >= 20;
}

function decodeBase64(run: string): string | null {
  try {
    const buf = Buffer.from(run.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (buf.length < 3) return null;
    return buf.toString('latin1');
  } catch {
    return null;
  }
}

/**
 * At most `max` characters of an upstream body for a message: one line (whitespace collapsed),
 * control characters removed, redacted, then cut (with "..." when cut). Empty when nothing useful.
 */
export function excerpt(body: string, redact: Redactor = redactGeneric, max = 160): string {
  const line = redact(body.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim());
  return line.length > max ? `${line.slice(0, max)}...` : line;
}

/**
 * A copy of log fields with every string (at any depth, including Error messages and stacks)
 * passed through `redact`. Non-plain objects other than Errors are kept as they are.
 */
export function redactFields(fields: Record<string, unknown>, redact: Redactor = redactGeneric): Record<string, unknown> {
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return redact(v);
    if (depth > 6 || v === null || typeof v !== 'object') return v;
    if (v instanceof Error) return { name: v.name, message: redact(v.message), ...(v.stack ? { stack: redact(v.stack) } : {}) };
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return v;
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x, depth + 1)]));
  };
  return walk(fields, 0) as Record<string, unknown>;
}

/**
 * The redactor of a job or request over a source spec: the spec's secret fields (named by the
 * caller, the writeOnly fields of the source's specSchema) with the spec's other short string
 * fields as possible Basic-auth user names (an email beside an API token).
 */
export function specRedactor(spec: Record<string, unknown>, secretKeys: readonly string[]): Redactor {
  const secrets: string[] = [];
  const users: string[] = [];
  for (const [k, v] of Object.entries(spec)) {
    if (typeof v !== 'string' || v === '') continue;
    if (secretKeys.includes(k)) secrets.push(v);
    else if (v.length <= 200) users.push(v);
  }
  return secrets.length === 0 ? redactGeneric : createRedactor(secrets, users);
}
