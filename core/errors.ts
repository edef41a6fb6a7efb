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
  | 'internal_error';

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
};

export class RefdeskError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RefdeskError';
    this.code = code;
    this.status = STATUS[code];
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
