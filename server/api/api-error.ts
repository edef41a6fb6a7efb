import { RefdeskError, type ErrorCode } from '../../core/errors.ts';

/**
 * A RefdeskError that carries more than {error, message}: extra body fields (`redirectUrl` for a
 * 301) and response headers (`Retry-After` and the RateLimit-* headers for a 429). The HTTP
 * layer adds both; in-process callers (the MCP endpoint) read them from the error.
 */
export class ApiError extends RefdeskError {
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;
  constructor(code: ErrorCode, message: string, extra: { details?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {}) {
    super(code, message, extra.cause !== undefined ? { cause: extra.cause } : undefined);
    this.name = 'ApiError';
    this.details = extra.details ?? {};
    this.headers = extra.headers ?? {};
  }
}
