import type { Context } from 'koa';
import * as p from './api/params.ts';

/** Query-string checks for Koa routes; the rules live in server/api/params.ts. */
export function requiredString(ctx: Context, name: string, max = 500): string {
  return p.requiredString(ctx.query, name, max);
}

export function optionalEnum<T extends string>(ctx: Context, name: string, allowed: readonly T[], dflt: T): T {
  return p.optionalEnum(ctx.query, name, allowed, dflt);
}

export function optionalInt(ctx: Context, name: string): number | undefined {
  return p.optionalInt(ctx.query, name);
}
