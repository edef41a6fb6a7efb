/**
 * The one way this plugin talks to Confluence: JSON GETs through the injected Fetch, with the
 * Authorization header, retries with back-off on 429 / 5xx / connection failures (honouring
 * Retry-After), and Confluence's refusals turned into RefdeskErrors that never hold a secret.
 */
import type { Fetch } from '../../core/contracts.ts';
import { RefdeskError, isRefdeskError } from '../../core/errors.ts';
import { RETRYABLE_STATUSES, fetchWithRetry, mediaTypeLabel } from '../../core/net/retry.ts';
import { redactGeneric } from '../../core/redact.ts';
import type { ConfluenceOptions } from './schema.ts';
import type { ConfluenceTarget } from './spec.ts';

/** What a 404 means for the request being made (e.g. `Space "ENG" was not found`). */
export interface RequestPurpose {
  /** A phrase for messages, e.g. `the pages of space "ENG"`. */
  what: string;
  /** The error to throw on HTTP 404 (Confluence also answers 404 for what the account cannot see). */
  notFound?: () => RefdeskError;
  /** The document path of the page the request is for (one page's body), for its job log lines. */
  path?: string;
}


export class ConfluenceHttp {
  /** Requests sent (attempts included), for the job log. */
  requests = 0;

  constructor(
    private readonly fetcher: Fetch,
    private readonly target: ConfluenceTarget,
    private readonly options: Pick<ConfluenceOptions, 'maxAttempts' | 'retryBaseMs' | 'maxRetryWaitMs'>,
    private readonly signal: AbortSignal,
    private readonly warn: (message: string, fields?: { path?: string }) => void,
  ) {}

  /**
   * GETs a URL on the site (a path is resolved against the site origin) and parses its JSON.
   * Only URLs on the configured site are requested: credentials never go to another host.
   */
  async getJson<T>(pathOrUrl: string, purpose: RequestPurpose): Promise<T> {
    const url = new URL(pathOrUrl, this.target.origin + '/');
    if (url.origin !== this.target.origin) {
      throw new RefdeskError(
        'invalid_source',
        `Confluence pointed ${purpose.what} to another site (${url.origin}); only ${this.target.origin} is read.`,
      );
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.target.authorization) headers.authorization = this.target.authorization;

    let res: Response;
    let attempts: number;
    try {
      ({ response: res, attempts } = await fetchWithRetry(
        this.fetcher,
        url.href,
        { headers, redirect: 'follow' },
        {
          policy: { attempts: this.options.maxAttempts, baseDelayMs: this.options.retryBaseMs, maxDelayMs: this.options.maxRetryWaitMs },
          signal: this.signal,
          onRetry: ({ delayMs, reason }) => {
            this.requests++;
            const status = /^HTTP (\d+)/.exec(reason)?.[1];
            this.warn(
              status
                ? `Confluence answered HTTP ${status} for ${purpose.what}; retrying in ${delayMs} ms`
                : `Confluence at ${this.target.origin} could not be reached (${reason}); retrying in ${delayMs} ms`,
              purpose.path ? { path: purpose.path } : undefined,
            );
          },
        },
      ));
      this.requests++;
    } catch (e) {
      this.requests++;
      if (this.signal.aborted) throw this.signal.reason ?? e;
      // The network policy refused the host (forbidden), or the site stayed unreachable.
      if (isRefdeskError(e) && e.code === 'invalid_source' && e.cause) {
        throw new RefdeskError(
          'invalid_source',
          `Could not reach Confluence at ${this.target.origin} for ${purpose.what} (${describeNetworkError(e.cause)}) after ${this.options.maxAttempts} attempts; check siteUrl and that the site is up.`,
        );
      }
      throw e;
    }
    if (res.ok) return await this.parse<T>(res, purpose);
    await res.body?.cancel().catch(() => {});
    if (RETRYABLE_STATUSES.has(res.status)) {
      throw new RefdeskError(
        'invalid_source',
        `Confluence at ${this.target.origin} kept answering HTTP ${res.status} for ${purpose.what} after ${attempts} attempts${res.status === 429 ? ' (rate limited)' : ''}; try again later.`,
      );
    }
    throw this.refusal(res.status, purpose);
  }

  private async parse<T>(res: Response, purpose: RequestPurpose): Promise<T> {
    const text = await res.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      const type = mediaTypeLabel(res.headers.get('content-type'));
      throw new RefdeskError(
        'invalid_source',
        `${this.target.base} did not answer ${purpose.what} with Confluence REST JSON (got ${type}); check siteUrl and deployment (${this.target.deployment}).`,
      );
    }
  }

  private refusal(status: number, purpose: RequestPurpose): RefdeskError {
    const site = `Confluence at ${this.target.origin}`;
    if (status === 401) {
      if (this.target.authKind === 'anonymous') {
        return new RefdeskError(
          'unauthorized',
          `${site} requires sign-in (HTTP 401): give email + apiToken (Cloud) or personalAccessToken (Server/Data Center).`,
        );
      }
      const which = this.target.authKind === 'basic' ? 'email + apiToken' : 'personalAccessToken';
      return new RefdeskError(
        'unauthorized',
        `${site} refused the credentials (HTTP 401): check the ${which} given for this library${this.target.deployment === 'cloud' ? ' (Cloud needs the account email and an API token)' : ''}.`,
      );
    }
    if (status === 403) {
      return new RefdeskError(
        'forbidden',
        `${site} denied access to ${purpose.what} (HTTP 403): the account needs permission to view space "${this.target.spaceKey}"${this.target.authKind === 'anonymous' ? ', or give credentials' : ''}.`,
      );
    }
    if (status === 404 && purpose.notFound) return purpose.notFound();
    if (status === 404) {
      return new RefdeskError(
        'invalid_source',
        `${site} answered HTTP 404 for ${purpose.what}: check siteUrl (${this.target.base}) and deployment (${this.target.deployment}).`,
      );
    }
    return new RefdeskError('invalid_source', `${site} answered HTTP ${status} for ${purpose.what}.`);
  }

}

function describeNetworkError(e: unknown): string {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError') return 'timed out';
  return err?.cause?.code ?? redactGeneric(err?.cause?.message ?? err?.message ?? 'network error');
}
