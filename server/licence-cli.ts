/**
 * `refdesk license <keygen|issue|show|serve-issuer|trial>`: the issuer's tools and asking for a
 * trial key. None of them needs a data directory or a licence.
 */
import { parseArgs } from 'node:util';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { RefdeskError } from '../core/errors.ts';
import {
  addDays,
  decodeUnverified,
  generateIssuerKeyPair,
  licenceState,
  parseIssuerPrivateKey,
  privateKeyPem,
  signLicence,
  verifyLicence,
  LicenceKeyError,
} from './licence-keys.ts';
import { trialUrl, trustedIssuers } from './licence.ts';

export const LICENSE_USAGE = `Usage: refdesk license <command> [options]

Commands:
  keygen --out DIR                       write a new issuer key pair: DIR/issuer.key (private, 0600)
                                         and DIR/issuer.pub (one line, for LICENSE_ISSUER_KEYS)
  issue --signing-key FILE --licensee NAME [--email E] [--days N] [--trial] [--plan P]
                                         print a licence key signed by FILE (365 days unless --days)
  show [KEY]                             print a key's fields (LICENSE_KEY without KEY) and whether
                                         this installation trusts it (exit 1 when it does not)
  serve-issuer --signing-key FILE [--port N] [--host H] [--state FILE] [--per-hour N]
               [--smtp-url URL --mail-from ADDR]
                                         serve POST /api/v2/license/trial (30-day trial keys);
                                         with --smtp-url (or SMTP_URL) the key is mailed (202)
  trial [--issuer URL] --email E --organization O
                                         ask an issuer for a 30-day trial key (printed on stdout)

Environment: LICENSE_KEY, LICENSE_ISSUER_KEYS (trusted issuer keys, comma-separated),
  LICENSE_TRIAL_URL (the issuer of \`trial\`, https://license.refdesk.dev by default),
  SMTP_URL and MAIL_FROM (serve-issuer: smtp[s]://user:password@host:port and the sender).
`;

const positiveInt = (v: string | undefined, flag: string, fallback: number): number => {
  if (v === undefined) return fallback;
  if (!/^\d{1,6}$/.test(v) || Number(v) < 1) throw new RefdeskError('invalid_request', `${flag} must be a positive whole number.`);
  return Number(v);
};

function readSigningKey(file: string | undefined) {
  if (!file) throw new RefdeskError('invalid_request', '--signing-key FILE is required (the issuer.key that refdesk license keygen wrote).');
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (e) {
    throw new RefdeskError('invalid_request', `Cannot read the signing key ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}.`);
  }
  try {
    return parseIssuerPrivateKey(pem);
  } catch (e) {
    throw new RefdeskError('invalid_request', `${file}: ${(e as Error).message}.`);
  }
}

function keygen(out: string | undefined): number {
  if (!out) throw new RefdeskError('invalid_request', 'keygen: give the folder to write the key pair to: refdesk license keygen --out DIR');
  const dir = resolve(out);
  const keyFile = join(dir, 'issuer.key');
  const pubFile = join(dir, 'issuer.pub');
  for (const f of [keyFile, pubFile]) {
    if (existsSync(f)) throw new RefdeskError('already_exists', `${f} already exists; keygen never overwrites an issuer key (keys it signed would stop verifying). Choose another --out folder.`);
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pair = generateIssuerKeyPair();
  // wx: never follow or replace a file created in between.
  writeFileSync(keyFile, privateKeyPem(pair.privateKey), { mode: 0o600, flag: 'wx' });
  writeFileSync(pubFile, pair.publicKey.line + '\n', { mode: 0o644, flag: 'wx' });
  process.stdout.write(`${pair.publicKey.line}\n`);
  process.stderr.write(`Wrote ${keyFile} (private: keep it off product servers) and ${pubFile} (issuer ${pair.publicKey.kid}; servers trust it through LICENSE_ISSUER_KEYS).\n`);
  return 0;
}

function issue(v: Record<string, string | boolean | undefined>): number {
  const issuer = readSigningKey(v['signing-key'] as string | undefined);
  const licensee = (v.licensee as string | undefined)?.trim();
  if (!licensee) throw new RefdeskError('invalid_request', 'issue: --licensee NAME is required (who the licence is for).');
  const days = positiveInt(v.days as string | undefined, '--days', 365);
  const now = new Date();
  const key = signLicence(issuer, {
    licensee,
    email: (v.email as string | undefined)?.trim() || undefined,
    plan: v.plan as string | undefined,
    trial: v.trial === true,
    issuedAt: now,
    expiresAt: addDays(now, days),
  });
  process.stdout.write(key + '\n');
  return 0;
}

function show(key: string | undefined, env: NodeJS.ProcessEnv): number {
  const text = (key ?? env.LICENSE_KEY ?? '').trim();
  if (!text) throw new RefdeskError('invalid_request', 'show: give a key, or set LICENSE_KEY.');
  const trusted = trustedIssuers(env);
  let trust: string;
  let payload = decodeUnverified(text);
  let ok = false;
  try {
    const verified = verifyLicence(text, trusted);
    payload = verified.payload;
    trust = `yes (issuer ${verified.issuer.kid})`;
    ok = true;
  } catch (e) {
    if (!(e instanceof LicenceKeyError)) throw e;
    const why = e.message.replace(/^LICENSE_KEY/, 'the key');
    if (e.reason === 'malformed' && !payload) throw new RefdeskError('license_invalid', why);
    trust = `no: ${why}`;
  }
  const p = payload!;
  const s = licenceState(p, new Date());
  const lines = [
    ['licensee', p.licensee],
    ['email', p.email ?? '-'],
    ['plan', p.plan],
    ['trial', p.trial ? 'yes' : 'no'],
    ['issued', p.issuedAt],
    ['expires', p.expiresAt],
    ['state', `${s.state}${s.state === 'expired' ? '' : ` (${s.daysLeft} days left)`}`],
    ['issuer', p.kid],
    ['trusted', trust],
  ];
  for (const [k, val] of lines) process.stdout.write(`${k.padEnd(9)}${val}\n`);
  return ok ? 0 : 1;
}

async function serveIssuer(v: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv): Promise<number> {
  const keyFile = v['signing-key'] as string | undefined;
  const issuer = readSigningKey(keyFile);
  const { startIssuerServer, defaultStatePath, TRIAL_PATH } = await import('./licence-issuer.ts');
  const port = v.port === undefined ? 3080 : Number(v.port);
  if (!/^\d{1,5}$/.test(String(v.port ?? '3080')) || port > 65535) throw new RefdeskError('invalid_request', '--port must be a number from 0 to 65535.');
  const host = (v.host as string | undefined)?.trim() || '127.0.0.1';
  const statePath = resolve((v.state as string | undefined) ?? defaultStatePath(resolve(keyFile!)));
  const perHour = positiveInt(v['per-hour'] as string | undefined, '--per-hour', 10);
  if (perHour < 5) throw new RefdeskError('invalid_request', '--per-hour must be at least 5: people retry, and several may ask from one office address.');
  const smtpUrl = ((v['smtp-url'] as string | undefined) ?? env.SMTP_URL ?? '').trim();
  const mailFrom = (v['mail-from'] as string | undefined) ?? env.MAIL_FROM;
  let mailer: import('./licence-issuer-mail.ts').TrialMailer | undefined;
  if (smtpUrl) {
    const { createTrialMailer } = await import('./licence-issuer-mail.ts');
    mailer = createTrialMailer({ url: smtpUrl, from: mailFrom });
  } else if (v['mail-from'] !== undefined) {
    throw new RefdeskError('invalid_request', '--mail-from needs --smtp-url (or SMTP_URL): the SMTP server that sends the trial keys.');
  }
  const { server, handler } = await startIssuerServer({ issuer, statePath, perHour, host, port, mailer });
  const bound = server.address() as { address: string; port: number };
  // Let mails being sent go out before exiting.
  const stop = () => server.close(() => void handler.idle().finally(() => process.exit(0)));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.stdout.write(`Refdesk licence issuer ${issuer.publicKey.kid} listening on port ${bound.port} (POST http://${host.includes(':') ? `[${host}]` : host}:${bound.port}${TRIAL_PATH}, trials recorded in ${statePath}; ${mailer ? `keys mailed through ${mailer.describe}` : 'keys answered in the response'})\n`);
  return -1;
}

async function trial(v: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv): Promise<number> {
  const base = ((v.issuer as string | undefined)?.trim() || trialUrl(env)).replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(`${base}/api/v2/license/trial`);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('scheme');
  } catch {
    throw new RefdeskError('invalid_request', `--issuer must be an http(s) URL, e.g. https://license.refdesk.dev (got "${base.slice(0, 100)}").`);
  }
  const email = (v.email as string | undefined)?.trim();
  const organization = (v.organization as string | undefined)?.trim();
  if (!email || !organization) throw new RefdeskError('invalid_request', 'trial: give --email E and --organization O (the trial key is issued to them).');
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, organization }), signal: AbortSignal.timeout(30_000) });
  } catch (e) {
    const why = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
    throw new RefdeskError('internal_error', `Could not reach the issuer at ${url.origin} (${why}); check --issuer (or LICENSE_TRIAL_URL) and the network.`);
  }
  const body = (await res.json().catch(() => ({}))) as { licenseKey?: string; expiresAt?: string; message?: string };
  if (res.status === 202) {
    // The issuer mails keys: nothing on stdout, and the same words whoever asked before.
    process.stderr.write(`The issuer mails the trial key to ${email}: ${body.message ?? 'check the inbox.'}\nWhen it arrives, set LICENSE_KEY to it (e.g. export LICENSE_KEY=...) and start refdesk serve.\n`);
    return 0;
  }
  if (!res.ok || typeof body.licenseKey !== 'string') {
    process.stderr.write(`refdesk: the issuer refused (HTTP ${res.status}): ${body.message ?? res.statusText}\n`);
    return 1;
  }
  process.stdout.write(body.licenseKey + '\n');
  process.stderr.write(`Trial key for ${organization}, valid until ${body.expiresAt?.slice(0, 10)}: set LICENSE_KEY to it (e.g. export LICENSE_KEY=...) and start refdesk serve.\n`);
  return 0;
}

export async function runLicenceCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      out: { type: 'string' },
      'signing-key': { type: 'string' },
      licensee: { type: 'string' },
      email: { type: 'string' },
      days: { type: 'string' },
      trial: { type: 'boolean' },
      plan: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      state: { type: 'string' },
      'per-hour': { type: 'string' },
      'smtp-url': { type: 'string' },
      'mail-from': { type: 'string' },
      issuer: { type: 'string' },
      organization: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    process.stdout.write(LICENSE_USAGE);
    return command || values.help ? 0 : 1;
  }
  switch (command) {
    case 'keygen':
      return keygen(values.out);
    case 'issue':
      return issue(values);
    case 'show':
      return show(rest[0], env);
    case 'serve-issuer':
      return serveIssuer(values, env);
    case 'trial':
      return trial(values, env);
    default:
      process.stderr.write(`refdesk: unknown license command "${command}"\n\n${LICENSE_USAGE}`);
      return 1;
  }
}
