/**
 * Include directives in uploaded documents (Hugo `{{% include %}}`, mkdocs `--8<--`, FastAPI
 * `{* *}`, VitePress `@include`, `!include`): expanded with the kernel's shared implementation
 * (core/includes), reading the targets from the same upload. Each target file is read once per
 * read and kept as text, so a fragment included by many pages (or also read as a document of
 * its own) is not read or counted again.
 */
import { DEFAULT_INCLUDE_LIMITS, expandMarkdownIncludes, expandsIncludes, gatherIncludes, includeWarning, type IncludeFiles, type IncludingPage } from '../../core/includes/expand.ts';
import { decodeDocument } from './decode.ts';
import type { UploadFiles } from './plan.ts';

export interface ExpandedDocument {
  content: string;
  lineMap?: number[];
}

export class UploadIncludes {
  /** Text of every target read so far; null: it could not be read (binary, too big, gone). */
  private readonly texts = new Map<string, string | null>();
  private readonly lookup: IncludeFiles;

  constructor(
    private readonly files: UploadFiles,
    private readonly warn: (message: string) => void,
  ) {
    this.lookup = { root: 'upload', exists: (p) => files.has(p), text: (p) => this.texts.get(p) ?? undefined };
  }

  /** The text of a document already read as an include target (so it is not read twice). */
  cached(path: string): string | undefined {
    return this.texts.get(path) ?? undefined;
  }

  /** When reads are batched (tar), reads what every page needs at once, before the first page. */
  async prepare(pages: () => Promise<IncludingPage[]>): Promise<void> {
    if (!this.files.batched) return;
    await gatherIncludes((await pages()).filter((p) => expandsIncludes(p.format)), this.lookup, (paths) => this.read(paths));
  }

  /** The document's content with its includes expanded, and its line map when the lines moved. */
  async expand(page: IncludingPage): Promise<ExpandedDocument> {
    if (!expandsIncludes(page.format)) return { content: page.text };
    if (!this.files.batched) await gatherIncludes([page], this.lookup, (paths) => this.read(paths));
    const out = expandMarkdownIncludes(page.path, page.text, this.lookup, DEFAULT_INCLUDE_LIMITS);
    if (out.problems.length > 0) this.warn(includeWarning(page.path, out.problems));
    return out.lineMap ? { content: out.content, lineMap: out.lineMap } : { content: out.content };
  }

  private async read(paths: string[]): Promise<void> {
    const fresh = paths.filter((p) => !this.texts.has(p));
    if (fresh.length === 0) return;
    const got = await this.files.read(fresh);
    for (const p of fresh) {
      const data = got.get(p);
      const decoded = data === undefined ? null : decodeDocument(data);
      this.texts.set(p, decoded !== null && 'text' in decoded ? decoded.text : null);
    }
  }
}
