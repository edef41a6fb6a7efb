/**
 * The installation's licence: read from LICENSE_KEY at start, verified offline against the
 * built-in issuer keys plus LICENSE_ISSUER_KEYS. `InstalledLicence` is the `LicenceView` the
 * access checks use (server/access.ts) and what /api/license and /api/ready report.
 */
import {
  licenceState,
  parseIssuerKeyList,
  parseIssuerPublicKey,
  verifyLicence,
  LicenceKeyError,
  type IssuerPublicKey,
  type LicencePayload,
  type LicenceState,
  type LicenceStatus,
} from './licence-keys.ts';
import { RefdeskError } from '../core/errors.ts';
import type { LicenceView } from './access.ts';

/** The issuer public keys shipped with the package (the Refdesk vendor's issuer). */
export const BUILT_IN_ISSUER_KEYS: readonly string[] = ['rdk-issuer-ed25519:ad85af2d760dbb9c:MCowBQYDK2VwAyEACV//iQ/JrFlD424k9jdhJYU0e1xCipomIhUH/5T0gVY='];

/** Where a trial key is asked for unless LICENSE_TRIAL_URL names another issuer. */
export const DEFAULT_TRIAL_URL = 'https://license.refdesk.dev';

/** Every issuer this installation trusts: the built-in ones, then LICENSE_ISSUER_KEYS. */
export function trustedIssuers(env: NodeJS.ProcessEnv = process.env): IssuerPublicKey[] {
  return [...BUILT_IN_ISSUER_KEYS.map((l) => parseIssuerPublicKey(l)), ...parseIssuerKeyList(env.LICENSE_ISSUER_KEYS)];
}

export function trialUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.LICENSE_TRIAL_URL?.trim() || DEFAULT_TRIAL_URL;
}

/** How to get a key, for the refusal line: the issuer URL and the command. */
export function trialHint(env: NodeJS.ProcessEnv = process.env): string {
  const url = trialUrl(env);
  return `Get a free 30-day trial key with: refdesk license trial --issuer ${url} --email you@example.com --organization "Your org" (or POST ${url}/api/v2/license/trial), then set LICENSE_KEY to it and start again (docs/licence.md).`;
}

export interface LicenceSummary {
  licensee: string;
  plan: string;
  trial: boolean;
  issuedAt: string;
  expiresAt: string;
  state: LicenceState;
  daysLeft: number;
  warning?: string;
  /** Admins only. */
  email?: string;
  issuer?: string;
}

export class InstalledLicence implements LicenceView {
  constructor(
    readonly payload: LicencePayload,
    readonly issuer: IssuerPublicKey,
    private readonly now: () => Date = () => new Date(),
  ) {}

  status(): LicenceStatus {
    return licenceState(this.payload, this.now());
  }

  state(): LicenceState {
    return this.status().state;
  }

  /** The warning of an expiring or expired licence (undefined while valid). */
  get reason(): string | undefined {
    return this.status().warning;
  }

  expired(): boolean {
    return this.state() === 'expired';
  }

  expiresAt(): string {
    return this.payload.expiresAt;
  }

  /** What /api/license shows: never the key; the email and issuer for admins only. */
  summary(forAdmin: boolean): LicenceSummary {
    const { licensee, plan, trial, issuedAt, expiresAt, email } = this.payload;
    const s = this.status();
    return {
      licensee,
      plan,
      trial,
      issuedAt,
      expiresAt,
      state: s.state,
      daysLeft: s.daysLeft,
      ...(s.warning ? { warning: s.warning } : {}),
      ...(forAdmin ? { ...(email ? { email } : {}), issuer: this.issuer.kid } : {}),
    };
  }
}

/**
 * The licence of LICENSE_KEY, or a RefdeskError whose message is the one line `serve` prints:
 * what is wrong and how to get a trial key. A bad LICENSE_ISSUER_KEYS is reported as such.
 */
export function loadLicence(env: NodeJS.ProcessEnv = process.env, now: () => Date = () => new Date()): InstalledLicence {
  const trusted = trustedIssuers(env);
  try {
    const { payload, issuer } = verifyLicence(env.LICENSE_KEY, trusted);
    return new InstalledLicence(payload, issuer, now);
  } catch (e) {
    if (e instanceof LicenceKeyError) {
      const what = e.reason === 'missing' ? 'LICENSE_KEY is not set: refdesk serve needs a licence key' : e.message.replace(/[.\s]+$/, '');
      throw new RefdeskError('license_invalid', `${what}. ${trialHint(env)}`);
    }
    throw e;
  }
}

/** The start-up log line of a licence: who it is for and until when, or its warning. */
export function startLine(licence: InstalledLicence): { level: 'info' | 'warn'; message: string } {
  const s = licence.status();
  const p = licence.payload;
  if (s.warning) return { level: 'warn', message: `licence: ${s.warning}` };
  return { level: 'info', message: `licence: ${p.trial ? 'trial ' : ''}${p.plan} for ${p.licensee}, valid until ${p.expiresAt.slice(0, 10)} (${s.daysLeft} days)` };
}
