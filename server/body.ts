import type { Context } from 'koa';
import { RefdeskError } from '../core/errors.ts';

/** Reads a JSON request body of at most `maxBytes`; a missing or malformed body is a 400 that says so. */
export async function readJsonBody(ctx: Context, maxBytes = 1024 * 1024): Promise<unknown> {
  const type = ctx.request.type;
  if (type && type !== 'application/json') {
    throw new RefdeskError('invalid_request', `The body must be JSON: send "Content-Type: application/json" (got "${type.slice(0, 60)}").`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new RefdeskError('too_large', `The request body is larger than ${maxBytes} bytes.`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new RefdeskError('invalid_request', 'The request body is empty; send a JSON object.');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RefdeskError('invalid_request', 'The request body is not valid JSON.');
  }
}
