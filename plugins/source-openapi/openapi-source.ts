import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { markdownMeta } from '../../core/readme-meta.ts';
import type { Fetch, Logger, PreviousDocument, RuntimeEnv, Source, SourceContext, SourceDocument } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { fetchSpec, readUploadedSpec, type LoadedSpec, type Validators } from './load-spec.ts';
import { buildModel } from './model.ts';
import { OPENAPI_FORMAT } from './operation-chunker.ts';
import { resolveOptions, type OpenApiOptions } from './options.ts';
import { parseText, validateSpec } from './parse-spec.ts';
import { renderApi } from './render.ts';

/**
 * Bumped whenever the rendering changes, so a refresh of an unchanged spec still re-renders
 * documents made by an older renderer.
 */
export const RENDER_VERSION = '1';

export interface OpenApiDeps {
  fetch: Fetch;
  env: Pick<RuntimeEnv, 'dataDir'>;
  logger?: Logger;
}

/** A library's source parameters: exactly one of them. */
export interface OpenApiSpec {
  url?: string;
  path?: string;
}

function parseSpec(spec: Record<string, unknown>): OpenApiSpec {
  const hasUrl = typeof spec.url === 'string' && spec.url !== '';
  const hasPath = typeof spec.path === 'string' && spec.path !== '';
  if (hasUrl === hasPath) {
    throw new RefdeskError('invalid_request', 'An OpenAPI source needs exactly one of "url" (an http(s) URL of the spec) or "path" (an uploaded spec file).');
  }
  return hasUrl ? { url: spec.url as string } : { path: spec.path as string };
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The validators and spec hash the previous build recorded (every document carries them). */
function previousFacts(previous: ReadonlyMap<string, PreviousDocument>): (Validators & { specHash?: string; render?: string }) | null {
  const first = previous.values().next();
  if (first.done) return null;
  const m = first.value.meta ?? {};
  return { etag: m.etag, lastModified: m.lastModified, specHash: m.specHash, render: m.render };
}

/**
 * Reads one OpenAPI 3.0/3.1 or Swagger 2.0 document (by URL through the injected Fetch, or an
 * uploaded file under `<dataDir>/uploads`), validates and dereferences it with swagger-parser and
 * yields it as markdown documents: `index.md` (overview, servers, authentication) and one
 * `tags/<tag>.md` per tag with one section per operation.
 */
export class OpenApiSource implements Source {
  readonly options: OpenApiOptions;

  constructor(
    options: Partial<OpenApiOptions> | undefined,
    private readonly deps: OpenApiDeps,
  ) {
    this.options = resolveOptions(options);
  }

  /** Where uploaded specs live. */
  get uploadsDir(): string {
    return join(this.deps.env.dataDir, 'uploads');
  }

  async *read(ctx: SourceContext): AsyncGenerator<SourceDocument> {
    ctx.signal.throwIfAborted();
    const spec = parseSpec(ctx.spec);
    const before = previousFacts(ctx.previous);
    const sameRenderer = before?.render === RENDER_VERSION;
    const loaded: LoadedSpec = spec.url
      ? await fetchSpec(this.deps.fetch, spec.url, {
          maxBytes: this.options.maxSpecBytes,
          attempts: this.options.fetchAttempts,
          signal: ctx.signal,
          validators: sameRenderer ? before ?? undefined : undefined,
          log: (m, path) => ctx.log('warn', m, path ? { path } : undefined),
        })
      : await readUploadedSpec(this.uploadsDir, spec.path!, this.options.maxSpecBytes);
    ctx.signal.throwIfAborted();

    if (loaded.notModified) {
      ctx.log('info', `the spec at ${loaded.location} is not modified (HTTP 304): keeping the ${ctx.previous.size} documents of the previous build`, { path: loaded.location });
      yield* this.unchanged(ctx);
      return;
    }
    ctx.progress({ bytes: loaded.bytes.length, message: `read ${loaded.bytes.length} bytes of spec` });
    const specHash = sha256(loaded.bytes);
    if (sameRenderer && before?.specHash === specHash) {
      ctx.log('info', `the spec at ${loaded.location} has not changed (same content hash): keeping the ${ctx.previous.size} documents of the previous build`, { path: loaded.location });
      yield* this.unchanged(ctx);
      return;
    }

    const text = loaded.bytes.toString('utf8');
    const started = Date.now();
    const parsed = await validateSpec(parseText(text, loaded.location), text, loaded.location);
    ctx.signal.throwIfAborted();
    const model = buildModel(parsed.api, parsed.version, spec.url);
    if (model.operationCount === 0) {
      throw new RefdeskError('no_documentation', `The spec ${loaded.location} is valid but has no operations under "paths": nothing to index.`);
    }
    if (model.operationCount > this.options.maxOperations) {
      throw new RefdeskError(
        'too_large',
        `The spec ${loaded.location} has ${model.operationCount} operations, more than ${this.options.maxOperations} (option maxOperations). Split it, or ask the operator to raise maxOperations.`,
      );
    }
    // The API's own name and summary: info.title, the first paragraph of info.description.
    ctx.setLibraryMeta?.({ title: model.title || undefined, description: markdownMeta(model.description).description });
    const docs = renderApi(model, parsed.schemaNames, spec.url ? loaded.location : `the uploaded file ${loaded.location}`);
    ctx.log('info', `${parsed.version}: ${model.operationCount} operations in ${model.tags.length} tags, validated and rendered in ${Date.now() - started} ms`, { path: loaded.location });
    const meta: Record<string, string> = {
      specHash,
      render: RENDER_VERSION,
      ...(loaded.etag ? { etag: loaded.etag } : {}),
      ...(loaded.lastModified ? { lastModified: loaded.lastModified } : {}),
    };
    for (const d of docs) {
      ctx.signal.throwIfAborted();
      yield { path: d.path, format: OPENAPI_FORMAT, title: d.title, content: d.content, hash: sha256(d.content), meta };
    }
    ctx.progress({ files: docs.length, bytes: loaded.bytes.length });
  }

  private *unchanged(ctx: SourceContext): Generator<SourceDocument> {
    for (const [path, prev] of ctx.previous) {
      ctx.signal.throwIfAborted();
      yield { path, format: OPENAPI_FORMAT, content: '', unchanged: true, hash: prev.hash, meta: prev.meta };
    }
  }
}
