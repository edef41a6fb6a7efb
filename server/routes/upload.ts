/**
 * POST /api/libraries/upload (multipart/form-data): documentation as files, for the upload
 * source (`/docs/<name>`). Fields: `file` (one .zip, .tar.gz/.tgz or .tar archive, or one or
 * more documentation files, their names as relative paths such as `guide/intro.md`), `name`
 * (required), `version`, `title`, `description` (optional). Several plain files are packed into
 * one zip; every upload is then read by the upload source with the guards of the CLI's archive
 * reader (zip-slip, sizes, counts: plugins/source-upload). Limits: `uploads.maxBytes` (the
 * request's files together) and `uploads.maxFiles` (parts), from the operator settings (PATCH
 * /api/settings, read at each request) or else from the config.
 *
 * 202 {libraryName, libraryId, jobId, state, statusUrl, eventsUrl, logUrl}. Uploading again under
 * the same name replaces the library's documentation (a new build; the old one is served until
 * it is finalized). Permission: admins, or anyone while the anonymous `parse` permission is On;
 * the licence must be valid.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import busboy from 'busboy';
import yazl from 'yazl';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { newRouter } from './router.ts';
import type { Kernel } from '../../core/kernel.ts';
import { RefdeskError } from '../../core/errors.ts';
import { addLibrary } from '../../core/ingest.ts';
import { uploadsDir } from '../../core/uploads.ts';
import { getUploadLimits } from '../../core/settings.ts';
import { pumpMultipart, streamToFile } from '../body.ts';
import type { ApiService } from '../api/service.ts';
import type { JobRunner } from '../job-runner.ts';
import type { Access } from '../access.ts';
import { queuedJobAnswer } from '../job-access.ts';
import { filesSourceKind } from '../source-capabilities.ts';

const FIELDS = ['name', 'version', 'title', 'description'] as const;

interface Part {
  /** The file's name as sent: a relative path. */
  name: string;
  file: string;
}

/** A file name of the upload as a path inside it: relative, forward slashes, no '.' or '..' segments. */
function entryName(raw: string): string {
  const name = raw.replace(/\\/g, '/');
  const bad =
    name === '' ||
    name.length > 500 ||
    name.startsWith('/') ||
    /^[A-Za-z]:/.test(name) ||
    /[\0-\x1f\x7f]/.test(name) ||
    name.split('/').some((s) => s === '' || s === '.' || s === '..');
  if (bad) {
    throw new RefdeskError('invalid_request', `The file name "${raw.slice(0, 80).replace(/[\0-\x1f\x7f]/g, '?')}" is not a relative path inside the upload (no leading '/', no '.' or '..' segments, no control characters, at most 500 characters); rename it and send it again.`);
  }
  return name;
}

type ArchiveKind = 'zip' | 'tar.gz' | 'tar';

/** The archive a file is, by its first bytes (the same signatures the upload source reads). */
async function archiveKind(file: string): Promise<ArchiveKind | null> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(512);
    const { bytesRead } = await fh.read(head, 0, 512, 0);
    if (bytesRead >= 4 && head[0] === 0x50 && head[1] === 0x4b && ((head[2] === 3 && head[3] === 4) || (head[2] === 5 && head[3] === 6))) return 'zip';
    if (bytesRead >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz';
    if (bytesRead >= 262 && head.toString('latin1', 257, 262) === 'ustar') return 'tar';
    return null;
  } finally {
    await fh.close();
  }
}

/** Packs plain files into one zip at `target`, each under its relative name. */
async function zipFiles(parts: Part[], target: string): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const p of parts) zip.addFile(p.file, p.name);
  zip.end();
  await pipeline(zip.outputStream as Readable, createWriteStream(target));
}

/**
 * Receives the multipart body: fields, and each `file` part streamed to its own file under the
 * uploads folder. Every failure (malformed or truncated body, over a limit, a bad name) is a 4xx
 * and removes whatever was written.
 */
async function receiveUpload(ctx: Context, dir: string, limits: { maxBytes: number; maxFiles: number }, browserForm: boolean): Promise<{ fields: Record<string, string>; parts: Part[] }> {
  if (ctx.request.type !== 'multipart/form-data') {
    throw new RefdeskError('invalid_request', 'Send the documentation as multipart/form-data: the files (or one archive) in "file" fields and the library name in "name".');
  }
  const tooLarge = () => new RefdeskError('too_large', `The upload is larger than ${limits.maxBytes} bytes (uploads.maxBytes in the settings or the config); send less, or pack it as a .tar.gz.`);
  if (Number(ctx.get('content-length') || 0) > limits.maxBytes + 256 * 1024) {
    ctx.set('Connection', 'close');
    throw tooLarge();
  }
  let bb: busboy.Busboy;
  try {
    bb = busboy({ headers: ctx.req.headers, preservePath: true, limits: { fileSize: limits.maxBytes, files: limits.maxFiles, fields: 10, fieldSize: 4000, parts: limits.maxFiles + 10 } });
  } catch {
    throw new RefdeskError('invalid_request', 'The multipart body is malformed: its Content-Type needs a boundary (multipart/form-data; boundary=...).');
  }
  await mkdir(dir, { recursive: true });
  const fields: Record<string, string> = {};
  ctx.state.uploadFields = fields;
  const parts: Part[] = [];
  const written: Array<Promise<Error | null>> = [];
  const streams: Readable[] = [];
  let failure: RefdeskError | null = null;
  let total = 0;
  const fail = (e: RefdeskError) => {
    failure ??= e;
  };
  bb.on('field', (name, value, info) => {
    if (!(FIELDS as readonly string[]).includes(name)) return fail(new RefdeskError('invalid_request', `Unexpected field "${name.slice(0, 40)}"; the fields are file, ${FIELDS.join(', ')}.`));
    if (info.valueTruncated) return fail(new RefdeskError('invalid_request', `The field "${name}" is too long.`));
    if (name in fields) return fail(new RefdeskError('invalid_request', `The field "${name}" was given twice.`));
    fields[name] = value;
  });
  bb.on('filesLimit', () => fail(new RefdeskError('too_large', `The upload has more than ${limits.maxFiles} files (uploads.maxFiles in the settings or the config); pack them as one .zip or .tar.gz.`)));
  bb.on('fieldsLimit', () => fail(new RefdeskError('invalid_request', 'The upload has too many fields.')));
  bb.on('partsLimit', () => fail(new RefdeskError('invalid_request', 'The upload has too many parts.')));
  bb.on('file', (name, stream, info) => {
    let problem: RefdeskError | null = null;
    let relName = '';
    if (browserForm && name === 'file' && !info.filename) {
      // An empty file input of a browser form: nothing chosen (its bytes, if any, are dropped).
      stream.on('error', () => {});
      stream.resume();
      return;
    }
    if (name !== 'file') problem = new RefdeskError('invalid_request', `Unexpected file field "${name.slice(0, 40)}"; send files in "file" fields.`);
    else {
      try {
        relName = entryName(info.filename ?? '');
        if (parts.some((p) => p.name === relName)) problem = new RefdeskError('invalid_request', `The file "${relName.slice(0, 80)}" was sent twice; each file needs its own path.`);
      } catch (e) {
        problem = e as RefdeskError;
      }
    }
    if (problem || failure) {
      if (problem) fail(problem);
      stream.on('error', () => {});
      stream.resume();
      return;
    }
    const file = join(dir, `${randomUUID()}.part`);
    parts.push({ name: relName, file });
    streams.push(stream);
    stream.on('limit', () => fail(tooLarge()));
    const count = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        total += chunk.length;
        if (total > limits.maxBytes) {
          fail(tooLarge());
          cb(tooLarge());
        } else cb(null, chunk);
      },
    });
    written.push(streamToFile(file, stream, count));
  });
  const parsed = pumpMultipart(ctx.req, bb, () => streams, 'send a complete multipart/form-data body.');
  const parseError = await parsed;
  const writeErrors = await Promise.all(written);
  const writeError = writeErrors.find((e) => e !== null) ?? null;
  const problem =
    parseError ??
    failure ??
    (writeError ? new RefdeskError('invalid_request', `The upload could not be received (${writeError.message.slice(0, 120)}); send it again.`) : null) ??
    (parts.length === 0 ? new RefdeskError('invalid_request', 'No files: send the documentation (files, or one .zip or .tar.gz) in "file" fields.') : null) ??
    (fields.name === undefined ? new RefdeskError('invalid_request', 'Give the library a "name" field: it becomes /docs/<name>.') : null);
  if (problem) {
    await Promise.all(parts.map((p) => rm(p.file, { force: true })));
    throw problem;
  }
  return { fields, parts };
}

/**
 * Receives a multipart upload and queues its build (POST /api/libraries/upload and the web UI's
 * upload form), once the caller's permission was checked: the 202 answer's body. The form
 * fields received so far are kept in `ctx.state.uploadFields` (the UI shows them again beside an
 * error). `browserForm`: a file part with no name and no bytes is what a browser sends for an
 * empty file input; it is skipped instead of refused.
 */
export async function uploadDocumentation(ctx: Context, kernel: Kernel, service: ApiService, jobs: JobRunner, opts: { browserForm?: boolean } = {}): Promise<Record<string, unknown>> {
  const kind = filesSourceKind(kernel);
  service.ensureSourceEnabled(kind);
  // The settings' uploads.* (PATCH /api/settings) win over the config's, read at each request.
  const limits = await getUploadLimits(kernel.store, kernel.config.uploads ?? { maxBytes: 200 * 1024 * 1024, maxFiles: 1000 });
  const dir = uploadsDir(kernel.env.dataDir);
  const { fields, parts } = await receiveUpload(ctx, dir, limits, opts.browserForm ?? false);
  const target = join(dir, `${randomUUID()}.upload`);
  try {
    const kinds = await Promise.all(parts.map((p) => archiveKind(p.file)));
    if (parts.length === 1 && kinds[0]) {
      await rename(parts[0].file, target);
    } else {
      const archive = parts.find((_, i) => kinds[i]);
      if (archive) throw new RefdeskError('invalid_request', `"${archive.name.slice(0, 80)}" is an archive: send one archive alone, or plain files without archives.`);
      await zipFiles(parts, target);
    }
    const { library, job } = await addLibrary(kernel, {
      source: kind,
      name: fields.name.trim(),
      version: fields.version?.trim() || undefined,
      title: fields.title?.trim().slice(0, 200) || undefined,
      description: fields.description?.trim().slice(0, 2000) || undefined,
      spec: { path: target },
    });
    jobs.enqueue(job.id);
    return await queuedJobAnswer(kernel.store, library.id, job, `Queued ${library.id} from ${parts.length === 1 ? `"${parts[0].name.slice(0, 80)}"` : `${parts.length} files`} (job ${job.id}).`);
  } catch (e) {
    await rm(target, { force: true });
    throw e;
  } finally {
    await Promise.all(parts.map((p) => rm(p.file, { force: true })));
  }
}

export function uploadRoutes(kernel: Kernel, service: ApiService, jobs: JobRunner, access: Access): Router {
  const r = newRouter();

  r.post('/api/libraries/upload', async (ctx) => {
    await access.requirePermission(ctx, 'parse', 'Uploading documentation');
    access.requireLicence('Uploading documentation');
    const answer = await uploadDocumentation(ctx, kernel, service, jobs);
    ctx.status = 202;
    ctx.body = answer;
  });

  return r;
}
