/**
 * Mailing trial keys from the issuer (`refdesk license serve-issuer --smtp-url ... --mail-from ...`).
 *
 * The SMTP settings come as one URL, `smtp://user:pass@host:587` (STARTTLS when the server offers
 * it) or `smtps://user:pass@host:465` (TLS from the start); user and password percent-encoded.
 * nodemailer does the SMTP. Everything this module says (start-up errors, the issuer log) goes
 * through a redactor holding the SMTP password and user, so neither the password nor its
 * encodings (percent, base64, AUTH PLAIN / LOGIN base64) can reach a log line or an error.
 */
import nodemailer from 'nodemailer';
import { RefdeskError } from '../core/errors.ts';
import { createRedactor, type Redactor } from '../core/redact.ts';
import { validEmail } from './licence-issuer.ts';

export interface TrialMail {
  to: string;
  organization: string;
  licenseKey: string;
  expiresAt: string;
}

/** Sends one trial key; rejects with an error whose message is already redacted. */
export interface TrialMailer {
  send(mail: TrialMail): Promise<void>;
  /** `smtp://host:port` without credentials, for the start-up line. */
  readonly describe: string;
  readonly redact: Redactor;
}

export interface SmtpSettings {
  url: string;
  /** The sender: an address or "Name <address>" (required). */
  from: string | undefined;
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** Parses and checks the settings; errors never quote the password. */
export function parseSmtpSettings(url: string, from: string | undefined): { parsed: URL; user: string; pass: string; from: string; redact: Redactor } {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    // The URL may hold a password: say what is wrong without echoing it.
    throw new RefdeskError('invalid_request', '--smtp-url (or SMTP_URL) is not a URL; give smtp://user:password@host:587 or smtps://user:password@host:465 (percent-encode special characters in the user and password).');
  }
  const user = decode(parsed.username);
  const pass = decode(parsed.password);
  const redact = createRedactor([pass, parsed.password].filter(Boolean), user ? [user] : []);
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') {
    // Not echoed: a mistyped URL may put part of the password where the scheme belongs.
    throw new RefdeskError('invalid_request', '--smtp-url (or SMTP_URL) must start with smtp:// or smtps://, e.g. smtp://user:password@host:587.');
  }
  if (!parsed.hostname) throw new RefdeskError('invalid_request', '--smtp-url (or SMTP_URL) has no host: smtp://user:password@host:587.');
  const sender = from?.trim() ?? '';
  const address = sender.match(/<([^<>]+)>\s*$/)?.[1] ?? sender;
  if (!sender) throw new RefdeskError('invalid_request', 'With --smtp-url (or SMTP_URL), give the sender with --mail-from (or MAIL_FROM), e.g. --mail-from "Refdesk licences <licences@example.com>".');
  if (!validEmail(address.trim()) || /[\r\n]/.test(sender)) throw new RefdeskError('invalid_request', `--mail-from (or MAIL_FROM) must be an address, or "Name <address>" (got "${redact(sender).slice(0, 100)}").`);
  return { parsed, user, pass, from: sender, redact };
}

export function trialMailText(mail: TrialMail): string {
  return [
    `Your 30-day Refdesk trial key for ${mail.organization} (valid until ${mail.expiresAt.slice(0, 10)}):`,
    '',
    mail.licenseKey,
    '',
    'Set LICENSE_KEY to it where refdesk runs, for example:',
    '',
    `  export LICENSE_KEY=${mail.licenseKey}`,
    '  refdesk serve',
    '',
    'You asked for this key at the Refdesk trial issuer. If you did not, you can ignore this mail.',
    '',
  ].join('\n');
}

/** A nodemailer transport for the settings. Nothing connects until the first send. */
export function createTrialMailer(settings: SmtpSettings): TrialMailer {
  const { parsed, user, pass, from, redact } = parseSmtpSettings(settings.url, settings.from);
  const secure = parsed.protocol === 'smtps:';
  const port = parsed.port ? Number(parsed.port) : secure ? 465 : 587;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const transport = nodemailer.createTransport({
    host,
    port,
    secure,
    ...(user || pass ? { auth: { user, pass } } : {}),
    // A stuck mail server must not hold trial mails for minutes.
    connectionTimeout: 20_000,
    greetingTimeout: 20_000,
    socketTimeout: 60_000,
    logger: false,
    debug: false,
  });
  return {
    describe: `${parsed.protocol}//${parsed.host}`,
    redact,
    async send(mail) {
      try {
        await transport.sendMail({
          from,
          to: mail.to,
          subject: `Your Refdesk trial key (valid until ${mail.expiresAt.slice(0, 10)})`,
          text: trialMailText(mail),
        });
      } catch (e) {
        const err = e as Error & { code?: string; responseCode?: number };
        const detail = [err.code, err.responseCode].filter((x) => x !== undefined).join(' ');
        throw new Error(redact(`${err.message}${detail ? ` (${detail})` : ''}`));
      }
    },
  };
}
