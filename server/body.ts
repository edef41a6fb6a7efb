import type { Context } from 'koa';
import type { IncomingMessage } from 'node:http';
import { createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { RefdeskError } from '../core/errors.ts';

/** The deepest nesting of objects and arrays a JSON body may have. */
export const MAX_JSON_DEPTH = 64;

/**
 * How much of an oversized body is still read (and thrown away) before the 413 is sent, so a
 * client that is still sending gets the answer instead of a reset connection. Past it, the
 * answer goes out at once and the connection is closed.
 */
const DRAIN_BYTES = 4 * 1024 * 1024;

function tooLarge(ctx: Context, maxBytes: number, what: string): RefdeskError {
  // The rest of the body is not read: the connection cannot be reused.
  ctx.set('Connection', 'close');
  return new RefdeskError('too_large', `${what} is larger than ${maxBytes} bytes; send at most ${maxBytes} bytes.`);
}

/** The 400 for a body whose connection ended (or failed) before the body was complete. */
export function bodyEndedEarly(): RefdeskError {
  return new RefdeskError('invalid_request', 'The request body ended before it was complete (connection closed or Content-Length larger than the body sent); send the whole body.');
}

/**
 * Refuses a request whose Content-Length announces more than `maxBytes` (+ `slack`), before any
 * byte of the body is read. A malformed Content-Length never reaches here (Node's HTTP parser
 * answers 400 itself).
 */
export function refuseDeclaredTooLarge(ctx: Context, maxBytes: number, what = 'The request body', slack = 0): void {
  const declared = ctx.get('content-length');
  if (declared && Number(declared) > maxBytes + slack) throw tooLarge(ctx, maxBytes, what);
}

/**
 * Reads a request body of at most `maxBytes`. Every outcome settles the promise: the end of the
 * body, a body past the limit (413 after draining a bounded rest), a connection that drops or
 * fails mid-body (400). The request stream is never destroyed here, so the answer can be sent.
 */
export function readBody(ctx: Context, maxBytes: number, what = 'The request body'): Promise<Buffer> {
  // A body a little over the limit is read to its end (and dropped) so the 4xx reaches a client
  // that sends it all before reading the answer; a far larger one is refused at once.
  refuseDeclaredTooLarge(ctx, maxBytes, what, DRAIN_BYTES);
  const req: IncomingMessage = ctx.req;
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onFail);
      req.off('close', onClose);
    };
    const fail = (e: RefdeskError) => {
      cleanup();
      // Whatever still arrives is read and dropped, never left to block the socket.
      req.resume();
      reject(e);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (over) {
        if (size > maxBytes + DRAIN_BYTES) fail(tooLarge(ctx, maxBytes, what));
        return;
      }
      if (size > maxBytes) {
        over = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (over) reject(tooLarge(ctx, maxBytes, what));
      else resolve(Buffer.concat(chunks, size));
    };
    const onFail = () => fail(bodyEndedEarly());
    const onClose = () => {
      if (!req.complete) fail(bodyEndedEarly());
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onFail);
    req.on('close', onClose);
  });
}

/**
 * Whether a JSON text nests objects/arrays deeper than `max`. One pass over the characters,
 * no recursion, so any depth is safe to check; brackets inside strings do not count.
 */
export function jsonNestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Parses a JSON request text: 400 `invalid_request` when empty, malformed or nested too deep. */
export function parseJsonText(text: string): unknown {
  if (text.trim() === '') throw new RefdeskError('invalid_request', 'The request body is empty; send a JSON object.');
  if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new RefdeskError('invalid_request', `The JSON body nests objects or arrays deeper than ${MAX_JSON_DEPTH} levels; send a flatter document.`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RefdeskError('invalid_request', 'The request body is not valid JSON.');
  }
}

/** Reads a JSON request body of at most `maxBytes`; a missing, malformed or too deep body is a 400 that says so. */
export async function readJsonBody(ctx: Context, maxBytes = 1024 * 1024): Promise<unknown> {
  const type = ctx.request.type;
  if (type && type !== 'application/json') {
    throw new RefdeskError('invalid_request', `The body must be JSON: send "Content-Type: application/json" (got "${type.slice(0, 60)}").`);
  }
  const body = await readBody(ctx, maxBytes);
  return parseJsonText(body.toString('utf8'));
}

/**
 * Streams a request body of at most `maxBytes` into `file`. Past the limit it fails with
 * `too_large` (the rest is read and dropped, the connection closed after the answer); a
 * connection that drops mid-body fails with a 400. The request stream is never destroyed, so
 * the answer can be sent; the caller removes the file on failure.
 */
export async function saveBody(ctx: Context, file: string, maxBytes: number, what = 'The upload'): Promise<void> {
  refuseDeclaredTooLarge(ctx, maxBytes, what);
  const req: IncomingMessage = ctx.req;
  let size = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length;
      if (size > maxBytes) cb(tooLarge(ctx, maxBytes, what));
      else cb(null, chunk);
    },
  });
  const onAbort = () => limit.destroy(bodyEndedEarly());
  const onClose = () => {
    if (!req.complete) onAbort();
  };
  req.on('aborted', onAbort);
  req.on('error', onAbort);
  req.on('close', onClose);
  req.pipe(limit);
  try {
    await pipeline(limit, createWriteStream(file));
  } finally {
    req.off('aborted', onAbort);
    req.off('error', onAbort);
    req.off('close', onClose);
    req.unpipe(limit);
    if (!req.readableEnded) req.resume();
  }
}

/**
 * Pipes a request into a busboy parser and settles once, never rejecting: null when the form was
 * read to its end, else the error (the body ended early, or it is not well-formed multipart; the
 * message ends with `hint`). On an error the request stops feeding the parser and every file
 * stream `openFiles()` names that has not ended is destroyed, so its write stream closes. Once
 * settled, the caller's 'file' listeners are replaced by one that drains and drops: a file part
 * the parser still emits from input it had buffered is never written, so no file can appear
 * after the caller's cleanup.
 */
export function pumpMultipart(req: IncomingMessage, bb: NodeJS.WritableStream & NodeJS.EventEmitter, openFiles: () => Iterable<NodeJS.ReadableStream & { readableEnded: boolean; destroy(e?: Error): void }>, hint: string): Promise<RefdeskError | null> {
  return new Promise<RefdeskError | null>((resolve) => {
    let settled = false;
    const done = (e: RefdeskError | null) => {
      if (settled) return;
      settled = true;
      req.off('aborted', onAborted);
      req.off('close', onClose);
      bb.removeAllListeners('file');
      bb.on('file', (_name: string, stream: NodeJS.ReadableStream) => {
        stream.on('error', () => {});
        stream.resume();
      });
      if (e) {
        req.unpipe(bb);
        req.resume();
        for (const s of openFiles()) if (!s.readableEnded) s.destroy(e);
      }
      resolve(e);
    };
    const onAborted = () => done(bodyEndedEarly());
    const onClose = () => {
      if (!req.complete) done(bodyEndedEarly());
    };
    bb.once('close', () => done(null));
    bb.on('error', (e: Error) => {
      const detail = /unexpected end of form/i.test(e.message) ? 'it ended before its closing boundary' : e.message.slice(0, 120);
      done(new RefdeskError('invalid_request', `The multipart body is malformed (${detail}); ${hint}`));
    });
    req.on('aborted', onAborted);
    req.on('close', onClose);
    req.pipe(bb);
  });
}

/**
 * Writes `source` (through `transforms`) to `file`; settles (never rejects) with the error or
 * null once the file's write stream has closed. The pipeline itself settles on the first error,
 * while the write stream may still be opening or closing its file; a caller that removes the
 * file of a failed upload must wait for that, or the file can appear after its removal.
 */
export function streamToFile(file: string, source: NodeJS.ReadableStream, ...transforms: NodeJS.ReadWriteStream[]): Promise<Error | null> {
  const out = createWriteStream(file);
  const closed = new Promise<void>((resolve) => {
    if (out.closed) resolve();
    else out.once('close', () => resolve());
  });
  return pipeline([source, ...transforms, out]).then(
    () => null,
    async (e: Error) => {
      await closed;
      return e;
    },
  );
}
