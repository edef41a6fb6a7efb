import type { Context } from 'koa';
import { RefdeskError } from '../core/errors.ts';

/** A required string query parameter of 1..max characters (after trimming). */
export function requiredString(ctx: Context, name: string, max = 500): string {
  const raw = ctx.query[name];
  if (raw === undefined) throw new RefdeskError('invalid_request', `Missing required parameter "${name}".`);
  if (Array.isArray(raw)) throw new RefdeskError('invalid_request', `Parameter "${name}" must be given once.`);
  const v = raw.trim();
  if (v.length === 0) throw new RefdeskError('invalid_request', `Parameter "${name}" must not be empty.`);
  if (v.length > max) throw new RefdeskError('invalid_request', `Parameter "${name}" must be at most ${max} characters (got ${v.length}).`);
  return v;
}

export function optionalEnum<T extends string>(ctx: Context, name: string, allowed: readonly T[], dflt: T): T {
  const raw = ctx.query[name];
  if (raw === undefined || raw === '') return dflt;
  if (Array.isArray(raw) || !allowed.includes(raw as T)) {
    throw new RefdeskError('invalid_request', `Parameter "${name}" must be one of: ${allowed.join(', ')}.`);
  }
  return raw as T;
}

export function optionalInt(ctx: Context, name: string): number | undefined {
  const raw = ctx.query[name];
  if (raw === undefined || raw === '') return undefined;
  if (Array.isArray(raw) || !/^\d{1,9}$/.test(raw)) throw new RefdeskError('invalid_request', `Parameter "${name}" must be a positive integer.`);
  return Number(raw);
}
