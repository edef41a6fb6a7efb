import { realpath, stat } from 'node:fs/promises';
import { basename, isAbsolute } from 'node:path';
import { markdownMeta } from '../../core/readme-meta.ts';
import type { Logger, Source, SourceContext, SourceDocument } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { planTar } from './archive-tar.ts';
import { planZip } from './archive-zip.ts';
import { decodeDocument } from './decode.ts';
import { archiveKindOfName, sniffArchive, type ArchiveKind } from './detect.ts';
import { ReadBudget, resolveOptions, type UploadOptions } from './limits.ts';
import { DocSelector } from './paths.ts';
import { NO_FILES, type ReadEnv, type ReadPlan } from './plan.ts';
import { UploadIncludes } from './upload-includes.ts';
import { planFolder, readFileBounded } from './walk-folder.ts';

/** A library's source parameters (validated against the specSchema). */
export interface UploadSpec {
  /** Absolute path of a folder, a documentation file, or a .zip / .tar.gz / .tgz / .tar archive. */
  path: string;
  /**
   * Path prefixes relative to the root; when given, only files under one of them become
   * documents (include directives may still read files elsewhere in the upload).
   */
  include?: string[];
  /** Path prefixes relative to the root that are never read, not even by an include (exclude wins over include). */
  exclude?: string[];
}

export interface UploadDeps {
  logger: Logger;
}

const PROGRESS_EVERY = 50;

function parseSpec(spec: Record<string, unknown>): UploadSpec {
  const { path, include, exclude } = spec;
  if (typeof path !== 'string' || path.length === 0) {
    throw new RefdeskError('invalid_source', 'Upload spec needs "path": the absolute path of a folder, a file or an archive');
  }
  const list = (v: unknown, key: string): string[] | undefined => {
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
      throw new RefdeskError('invalid_source', `Upload spec "${key}" must be an array of path prefixes`);
    }
    return v as string[];
  };
  return { path, include: list(include, 'include'), exclude: list(exclude, 'exclude') };
}

function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Reads a local folder, a single documentation file, or an archive (zip, tar.gz, tar) as the
 * documents of a library. Archives are read in memory and never extracted to disk. Include
 * directives of Markdown documents are expanded from files of the same upload (see
 * upload-includes.ts); such documents carry a line map, so snippets cite their own lines.
 */
export class UploadSource implements Source {
  readonly options: UploadOptions;
  private readonly logger: Logger | undefined;

  constructor(options?: Partial<UploadOptions>, deps?: Partial<UploadDeps>) {
    this.options = resolveOptions(options);
    this.logger = deps?.logger;
  }

  async *read(ctx: SourceContext): AsyncGenerator<SourceDocument> {
    const spec = parseSpec(ctx.spec);
    ctx.signal.throwIfAborted();
    if (!isAbsolute(spec.path)) {
      throw new RefdeskError('invalid_source', `Upload path must be absolute: ${spec.path}`);
    }
    const selector = new DocSelector(this.options.extensions, spec.include, spec.exclude);
    const env: ReadEnv = {
      label: basename(spec.path),
      limits: this.options,
      selector,
      budget: new ReadBudget(this.options),
      signal: ctx.signal,
      warn: (m) => ctx.log('warn', m),
      debug: (m) => this.logger?.debug(m, { libraryId: ctx.libraryId }),
    };

    const { plan, what } = await this.plan(spec, env);
    ctx.progress({ total: plan.docs.length });
    const includes = new UploadIncludes(plan.files, env.warn);
    let files = 0;
    let bytes = 0;
    try {
      await includes.prepare(async () => {
        const pages = [];
        for (const doc of plan.docs) {
          const data = await doc.load();
          const decoded = data === null ? null : decodeDocument(data);
          if (decoded !== null && 'text' in decoded) pages.push({ path: doc.path, format: doc.format, text: decoded.text });
        }
        return pages;
      });
      for (const doc of plan.docs) {
        ctx.signal.throwIfAborted();
        // A fragment read before as an include target is not read (nor counted) again.
        let text = includes.cached(doc.path);
        let size = text === undefined ? 0 : Buffer.byteLength(text);
        if (text === undefined) {
          const data = await doc.load();
          if (data === null) continue;
          const decoded = decodeDocument(data);
          if ('skip' in decoded) {
            ctx.log('warn', `Skipped ${doc.path}: ${decoded.skip}`, { path: doc.path });
            continue;
          }
          text = decoded.text;
          size = data.length;
        }
        const expanded = await includes.expand({ path: doc.path, format: doc.format, text });
        // The project's own name for itself: the root README's first H1 and paragraph.
        if (/^readme\.(md|mdx|markdown)$/i.test(doc.path)) ctx.setLibraryMeta?.(markdownMeta(text));
        files += 1;
        bytes += size;
        yield { path: doc.path, format: doc.format, ...expanded };
        if (files % PROGRESS_EVERY === 0) ctx.progress({ files, bytes });
      }
    } finally {
      await plan.close();
    }
    ctx.signal.throwIfAborted();
    if (files === 0) throw this.noDocumentation(spec, selector, what, plan.docs.length);
    ctx.progress({ files, bytes });
    ctx.log('info', `read ${files} files, ${bytes} bytes`);
  }

  private async plan(spec: UploadSpec, env: ReadEnv): Promise<{ plan: ReadPlan; what: string }> {
    let st;
    try {
      st = await stat(spec.path);
    } catch (e) {
      const code = errCode(e);
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        throw new RefdeskError('invalid_source', `Upload path not found: ${spec.path}`);
      }
      throw new RefdeskError('invalid_source', `Upload path cannot be read: ${spec.path} (${code ?? 'error'})`);
    }
    if (st.isDirectory()) {
      env.debug(`upload: reading folder ${spec.path}`);
      return { plan: await planFolder(spec.path, env), what: 'folder' };
    }
    if (!st.isFile()) {
      throw new RefdeskError(
        'invalid_source',
        `Upload path is neither a folder, a regular file nor a supported archive: ${spec.path}`,
      );
    }
    let kind: ArchiveKind | null;
    try {
      kind = (await sniffArchive(spec.path)) ?? archiveKindOfName(spec.path);
    } catch (e) {
      throw new RefdeskError('invalid_source', `Upload path cannot be read: ${spec.path} (${errCode(e) ?? 'error'})`);
    }
    if (kind !== null) {
      env.debug(`upload: reading ${kind} archive ${spec.path}`);
      const plan = kind === 'zip' ? await planZip(spec.path, env) : await planTar(spec.path, kind === 'tar.gz', env);
      return { plan, what: `${kind} archive` };
    }

    // A single documentation file: chosen explicitly, so hidden names and filters do not apply.
    const name = basename(spec.path);
    const format = env.selector.formatOf(name);
    if (format === null) {
      throw new RefdeskError(
        'invalid_source',
        `Upload path is neither a folder, a documentation file (${env.selector.extensionList}) nor a supported archive (.zip, .tar.gz, .tgz, .tar): ${spec.path}`,
      );
    }
    const file = await realpath(spec.path);
    env.budget.addFile();
    const plan: ReadPlan = {
      docs: [{ path: name, format, load: () => readFileBounded(file, name, env) }],
      files: NO_FILES,
      close: async () => {},
    };
    return { plan, what: 'file' };
  }

  private noDocumentation(spec: UploadSpec, selector: DocSelector, what: string, planned: number): RefdeskError {
    const filters = selector.hasFilters
      ? ` under include ${JSON.stringify(spec.include ?? [])} / exclude ${JSON.stringify(spec.exclude ?? [])}`
      : '';
    const skipped = planned > 0 ? ` (${planned} candidate files were skipped, see the warnings)` : '';
    return new RefdeskError(
      'no_documentation',
      `No documentation files in ${what} ${spec.path}: looked for ${selector.extensionList}${filters}, ignoring node_modules and hidden files${skipped}`,
    );
  }
}
