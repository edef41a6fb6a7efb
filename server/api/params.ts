/**
 * Checks of request parameters given as plain values (query-string values, JSON fields or MCP
 * tool arguments alike). Every failure is a 400 `invalid_request` naming the parameter and what
 * it must be; values are never echoed (they may be secrets or very long).
 */
import { RefdeskError } from '../../core/errors.ts';

export type Params = Record<string, unknown>;

function bad(message: string): never {
  throw new RefdeskError('invalid_request', message);
}

/** A required string of 1..max characters after trimming. */
export function requiredString(params: Params, name: string, max = 500): string {
  const raw = params[name];
  if (raw === undefined || raw === null) bad(`Missing required parameter "${name}".`);
  if (Array.isArray(raw)) bad(`Parameter "${name}" must be given once.`);
  if (typeof raw !== 'string') bad(`Parameter "${name}" must be a string.`);
  const v = raw.trim();
  if (v.length === 0) bad(`Parameter "${name}" must not be empty.`);
  if (v.length > max) bad(`Parameter "${name}" must be at most ${max} characters (got ${v.length}).`);
  return v;
}

/** An optional string of 1..max characters; undefined when absent. */
export function optionalString(params: Params, name: string, max = 500): string | undefined {
  if (params[name] === undefined) return undefined;
  return requiredString(params, name, max);
}

export function optionalEnum<T extends string>(params: Params, name: string, allowed: readonly T[], dflt: T): T {
  const raw = params[name];
  if (raw === undefined || raw === '') return dflt;
  if (Array.isArray(raw) || typeof raw !== 'string' || !allowed.includes(raw as T)) {
    bad(`Parameter "${name}" must be one of: ${allowed.join(', ')}.`);
  }
  return raw as T;
}

/** A positive integer given as a number or as decimal digits; undefined when absent. */
export function optionalInt(params: Params, name: string): number | undefined {
  const raw = params[name];
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw === 'number' && Number.isInteger(raw) && raw > 0 && raw < 1e9) return raw;
  if (typeof raw !== 'string' || !/^\d{1,9}$/.test(raw) || Number(raw) === 0) bad(`Parameter "${name}" must be a positive integer.`);
  return Number(raw);
}

/** `true`/`false` (strings or booleans); the default when absent. */
export function optionalBool(params: Params, name: string, dflt = false): boolean {
  const raw = params[name];
  if (raw === undefined || raw === '') return dflt;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  bad(`Parameter "${name}" must be true or false.`);
}

/** A JSON body that must be an object. */
export function objectBody(body: unknown): Params {
  if (!body || typeof body !== 'object' || Array.isArray(body)) bad('The request body must be a JSON object.');
  return body as Params;
}

/** Refuses fields a body may not have, naming the ones it may. */
export function onlyFields(body: Params, allowed: readonly string[]): void {
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) bad(`Unknown field "${unknown[0].slice(0, 40)}"; this endpoint takes: ${allowed.join(', ')}.`);
}
