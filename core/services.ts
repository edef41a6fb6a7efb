import type { Clock, Fetch, Logger, LogLevel } from './contracts.ts';
import { redactFields, redactGeneric } from './redact.ts';

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * JSON-lines logger on stderr (stdout belongs to CLI output and MCP stdio). Every message and
 * string field goes through the generic redaction (credential headers, Bearer/Basic values,
 * token= parameters, URL userinfo): a log line never carries a credential in those shapes.
 */
export function createConsoleLogger(minLevel: LogLevel = 'info', sink: (line: string) => void = (l) => process.stderr.write(l + '\n')): Logger {
  const log = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (LEVELS[level] < LEVELS[minLevel]) return;
    sink(JSON.stringify({ at: new Date().toISOString(), level, message: redactGeneric(message), ...(fields ? redactFields(fields) : {}) }));
  };
  return {
    log,
    debug: (m, f) => log('debug', m, f),
    info: (m, f) => log('info', m, f),
    warn: (m, f) => log('warn', m, f),
    error: (m, f) => log('error', m, f),
  };
}

export const systemClock: Clock = { now: () => new Date() };

/** The default Fetch: the platform fetch with a timeout (30 s unless given). */
export function createFetch(defaultTimeoutMs = 30_000): Fetch {
  return {
    async fetch(url, init = {}) {
      const { timeoutMs = defaultTimeoutMs, signal, ...rest } = init;
      const timeout = AbortSignal.timeout(timeoutMs);
      const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
      return fetch(url, { ...rest, signal: combined });
    },
  };
}
