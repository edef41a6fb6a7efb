import type { Clock, Fetch, Logger, LogLevel } from './contracts.ts';
import { createRedactor, redactFields, redactGeneric } from './redact.ts';

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFormat = 'json' | 'text';

export interface ConsoleLoggerOptions {
  /** `json` (default): one JSON object a line. `text`: `warning: message (key=value)`, for people. */
  format?: LogFormat;
  /** Fields left out of text lines (e.g. the job and library IDs every line of a CLI ingest shares). */
  omitFields?: readonly string[];
  /** Also keeps every line written (already redacted) here: the server's recent log for the support bundle. */
  ring?: LogRing;
}

/** The last `capacity` log lines of a process, oldest first (a fixed-size ring, no growth). */
export class LogRing {
  private readonly buf: string[] = [];
  private next = 0;
  constructor(readonly capacity = 5000) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('LogRing capacity must be a positive integer');
  }
  push(line: string): void {
    if (this.buf.length < this.capacity) this.buf.push(line);
    else this.buf[this.next] = line;
    this.next = (this.next + 1) % this.capacity;
  }
  /** The lines kept, oldest first. */
  lines(): string[] {
    return this.buf.length < this.capacity ? [...this.buf] : [...this.buf.slice(this.next), ...this.buf.slice(0, this.next)];
  }
}

const TEXT_LABEL: Record<LogLevel, string> = { debug: 'debug: ', info: '', warn: 'warning: ', error: 'error: ' };

function textValue(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=,()]+$/.test(v) ? v : JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return JSON.stringify(v) ?? String(v);
}

/** One readable line: `warning: message (key=value, ...)`; a `stack` field follows on its own lines. */
export function formatTextLogLine(level: LogLevel, message: string, fields: Record<string, unknown> = {}, omit: readonly string[] = []): string {
  const parts: string[] = [];
  let stack = '';
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined || omit.includes(k)) continue;
    if (k === 'stack' && typeof v === 'string') stack = v;
    else parts.push(`${k}=${textValue(v)}`);
  }
  return `${TEXT_LABEL[level]}${message}${parts.length ? ` (${parts.join(', ')})` : ''}${stack ? `\n${stack}` : ''}`;
}

/**
 * Logger on stderr (stdout belongs to CLI output and MCP stdio): JSON lines unless `format: 'text'`.
 * Every message and string field goes through the generic redaction (credential headers,
 * Bearer/Basic values, token= parameters, URL userinfo): a log line never carries a credential in those shapes.
 */
export function createConsoleLogger(
  minLevel: LogLevel = 'info',
  sink: (line: string) => void = (l) => process.stderr.write(l + '\n'),
  options: ConsoleLoggerOptions = {},
): Logger {
  const text = options.format === 'text';
  const log = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (LEVELS[level] < LEVELS[minLevel]) return;
    const safeMessage = redactGeneric(message);
    const safeFields = fields ? redactFields(fields) : undefined;
    const line = text ? formatTextLogLine(level, safeMessage, safeFields, options.omitFields) : JSON.stringify({ at: new Date().toISOString(), level, message: safeMessage, ...safeFields });
    options.ring?.push(line);
    sink(line);
  };
  return loggerFrom(log);
}

/** A Logger whose level methods all go through one `log` function. */
export function loggerFrom(log: Logger['log']): Logger {
  return {
    log,
    debug: (m, f) => log('debug', m, f),
    info: (m, f) => log('info', m, f),
    warn: (m, f) => log('warn', m, f),
    error: (m, f) => log('error', m, f),
  };
}

/** Environment variables whose values are secrets, by name. */
const SECRET_ENV_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|_PAT$|API_KEY|LICENSE_KEY|PRIVATE/i;

/**
 * Removes secrets from a text bound for a log: the values of secret-named environment variables
 * (and their encodings), the generic credential shapes of core/redact.ts, and Refdesk API keys.
 */
export function redactSecrets(text: string, env: NodeJS.ProcessEnv = process.env): string {
  const values = Object.entries(env).flatMap(([name, value]) => (value && value.length >= 4 && SECRET_ENV_NAME.test(name) ? [value] : []));
  return createRedactor(values)(text).replace(/\brdk_[A-Za-z0-9_-]+/g, 'rdk_***');
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
