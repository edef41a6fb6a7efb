/**
 * Errors a user can act on carry a stable code and an HTTP status; the message says what to fix.
 * Messages never contain secret values.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'invalid_library_id'
  | 'library_not_found'
  | 'version_not_found'
  | 'library_not_finalized'
  | 'already_exists'
  | 'no_documentation'
  | 'too_large'
  | 'invalid_source'
  | 'unauthorized'
  | 'forbidden'
  | 'store_locked'
  | 'config_error'
  | 'internal_error'
  | 'library_redirected'
  | 'invalid_api_key'
  | 'access_denied'
  | 'rate_limit_exceeded'
  | 'source_not_enabled'
  | 'search_failed'
  | 'processing_timeout'
  | 'build_failed'
  | 'library_busy'
  | 'upload_required'
  | 'license_expired'
  | 'license_invalid'
  | 'csrf_failed'
  | 'credentials_change_required'
  | 'login_locked'
  | 'forbidden_host'
  | 'not_found';

const STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  invalid_library_id: 400,
  library_not_found: 404,
  version_not_found: 404,
  library_not_finalized: 202,
  already_exists: 409,
  no_documentation: 422,
  too_large: 422,
  invalid_source: 400,
  unauthorized: 401,
  forbidden: 403,
  store_locked: 409,
  config_error: 500,
  internal_error: 500,
  /** The library was renamed; the error body carries `redirectUrl` (the new library ID). */
  library_redirected: 301,
  /** The API key is missing where required, mis-formatted, unknown or revoked. */
  invalid_api_key: 401,
  /** The server's policy hides the library. */
  access_denied: 403,
  rate_limit_exceeded: 429,
  /** The source kind asked for is not enabled in this server's config. */
  source_not_enabled: 400,
  /** The search backend failed (store or reranker); retrying later may work. */
  search_failed: 503,
  /** The request did not finish within the server's time limit. */
  processing_timeout: 504,
  /** The version has nothing served and its newest build failed; the message gives the reason. */
  build_failed: 422,
  /** A job of the library is running; the change must wait until it has finished. */
  library_busy: 409,
  /** The library was built from an uploaded file that is no longer kept: upload it again. */
  upload_required: 409,
  /** The licence has expired: reading and deleting still work; adding, parsing, refresh and policy changes do not. */
  license_expired: 403,
  /** The licence key is missing, malformed, tampered with or signed by an untrusted issuer. */
  license_invalid: 403,
  /** A cookie-authenticated state change without the session's CSRF token or from another origin. */
  csrf_failed: 403,
  /** Signed in with the factory credentials: only changing them is allowed. */
  credentials_change_required: 403,
  /** Too many failed sign-ins for this account and address: try again later (Retry-After). */
  login_locked: 429,
  /** The Host header is not one of the server's allowed hosts (DNS rebinding guard). */
  forbidden_host: 403,
  /** No such resource (job, key, session, ...). */
  not_found: 404,
};

/** Marks every RefdeskError, whichever copy of this module made it (a global symbol). */
const REFDESK_ERROR = Symbol.for('refdesk.error');

export class RefdeskError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RefdeskError';
    this.code = code;
    this.status = STATUS[code];
    Object.defineProperty(this, REFDESK_ERROR, { value: true });
  }

  /**
   * `e instanceof RefdeskError` holds for an error of another copy of this module too: the
   * compiled server is a bundle, and a plugin given by path that imports the package's compiled
   * core (or its own copy) throws errors of that copy. Subclasses keep the plain prototype check.
   */
  static override [Symbol.hasInstance](x: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, x)) return true;
    return this === RefdeskError && typeof x === 'object' && x !== null && (x as Record<symbol, unknown>)[REFDESK_ERROR] === true;
  }
}

/** A configuration problem found at start-up: names the config file and path, never a value. */
export class ConfigError extends RefdeskError {
  constructor(message: string) {
    super('config_error', message);
    this.name = 'ConfigError';
  }
}

export function isRefdeskError(e: unknown): e is RefdeskError {
  return e instanceof RefdeskError;
}
