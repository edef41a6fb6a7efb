/**
 * Include expansion for Markdown pages, shared by every source that reads a documentation tree
 * (git repositories, uploaded folders and archives).
 *
 * A directive line (see directives.ts) is replaced by the text it names: Markdown as it is (its
 * front matter left out, its own directives expanded in turn), code as a fenced block in the
 * file's language (raw lines when the directive sits inside a fence). The page keeps pointing
 * at its own file: the result carries a line map (line-map.ts) in which every line an include
 * brought in maps to the line of its directive, so snippets of included text cite that line and
 * a section holding a directive spans its own lines of the original file.
 *
 * Safety: targets are looked up among the root's regular files only and never outside it
 * (resolve.ts); includes nest at most `maxDepth` deep; a file that includes itself, directly or
 * through others, is not included again; a page grows to at most `maxChars` characters. A
 * directive that cannot be expanded stays as it is (the chunker drops directive lines) and is
 * reported in `problems`.
 */
import { findIncludeTargets, FenceTracker, parseDirective, snippetTarget, type IncludeTarget } from './directives.ts';
import { isIdentityMap } from './line-map.ts';
import { resolveIncludePath } from './resolve.ts';
import { languageOf, selectLines, stripFrontMatter } from './select.ts';

/** The files include targets are looked up in. */
export interface IncludeFiles {
  /** What the root is called in messages ('repository', 'upload'). */
  root: string;
  /** Whether the root has a regular file at this path (relative, forward slashes). */
  exists(path: string): boolean;
  /** The text of a file read before (see gatherIncludes); undefined when it could not be read. */
  text(path: string): string | undefined;
}

export interface IncludeLimits {
  /** How deep includes nest: 1 expands only the page's own directives. */
  maxDepth: number;
  /** Most characters of an expanded page; directives past it stay unexpanded. */
  maxChars: number;
}

export const DEFAULT_INCLUDE_LIMITS: Readonly<IncludeLimits> = Object.freeze({ maxDepth: 5, maxChars: 4 * 1024 * 1024 });

export interface ExpandedPage {
  content: string;
  /** Present when the content's lines are not the file's: line i + 1 of content comes from line lineMap[i]. */
  lineMap?: number[];
  /** Root paths of the files included (nested ones too), sorted. */
  used: string[];
  /** One line per directive left unexpanded, saying why. */
  problems: string[];
}

interface State {
  files: IncludeFiles;
  limits: IncludeLimits;
  used: Set<string>;
  problems: string[];
  chars: number;
}

/** Formats whose include directives expandMarkdownIncludes reads. */
export function expandsIncludes(format: string): boolean {
  return format === 'markdown' || format === 'mdx';
}

/** Expands the include directives of a Markdown page at `path`. */
export function expandMarkdownIncludes(path: string, text: string, files: IncludeFiles, limits: IncludeLimits = DEFAULT_INCLUDE_LIMITS): ExpandedPage {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const state: State = { files, limits, used: new Set(), problems: [], chars: text.length };
  const { out, from } = expandLines(path, lines, 0, [path], state);
  const content = out.join('\n');
  const used = [...state.used].sort();
  if (out.length === lines.length && isIdentityMap(from)) return { content, used, problems: state.problems };
  return { content, lineMap: from, used, problems: state.problems };
}

/** The lines of a page with its directives expanded, and for each the page line it comes from. */
function expandLines(pagePath: string, lines: string[], depth: number, stack: string[], st: State): { out: string[]; from: number[] } {
  const out: string[] = [];
  const from: number[] = [];
  const fences = new FenceTracker();
  let block: Array<{ line: string; at: number }> | null = null;

  const include = (target: IncludeTarget, indent: string, original: string, at: number, raw: boolean): void => {
    const got = includedLines(pagePath, target, indent, raw, depth, stack, st);
    if ('problem' in got) {
      st.problems.push(got.problem);
      out.push(original);
      from.push(at);
      return;
    }
    for (const l of got.lines) {
      out.push(l);
      from.push(at);
    }
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const at = i + 1;
    if (block !== null) {
      if (parseDirective(line, false)?.kind === 'snippet-block') {
        for (const b of block) include(snippetTarget(b.line.trim()), '', b.line, b.at, false);
        block = null;
      } else if (line.trim() !== '') block.push({ line, at });
      continue;
    }
    const inFence = fences.inside;
    const d = fences.update(line) === null ? parseDirective(line, inFence) : null;
    if (d === null) {
      out.push(line);
      from.push(at);
    } else if (d.kind === 'snippet-block') block = [];
    else include(d.target, d.indent, line, at, inFence);
  }
  // A block never closed: its lines stay as they are.
  for (const b of block ?? []) {
    out.push(b.line);
    from.push(b.at);
  }
  return { out, from };
}

function includedLines(pagePath: string, target: IncludeTarget, indent: string, raw: boolean, depth: number, stack: string[], st: State): { lines: string[] } | { problem: string } {
  const r = resolveIncludePath(pagePath, target.file, (p) => st.files.exists(p), target.scope, st.files.root);
  if ('problem' in r) return r;
  if (stack.includes(r.path)) return { problem: `"${target.file}" is not included again: ${[...stack, r.path].join(' -> ')} is a cycle` };
  if (depth >= st.limits.maxDepth) return { problem: `"${target.file}" is not included: includes nest at most ${st.limits.maxDepth} deep` };
  const text = st.files.text(r.path);
  if (text === undefined) return { problem: `"${r.path}" could not be read` };
  const language = languageOf(r.path);
  const markdown = !raw && language === 'markdown';
  let body = selectLines(text, target.options);
  if (markdown && Object.keys(target.options).length === 0) body = stripFrontMatter(body);
  const chars = body.reduce((n, l) => n + l.length + 1, 0);
  if (st.chars + chars > st.limits.maxChars) {
    return { problem: `"${r.path}" is not included: the page would grow past ${st.limits.maxChars} characters` };
  }
  st.chars += chars;
  st.used.add(r.path);
  const indented = (ls: string[]) => ls.map((l) => (l === '' ? '' : indent + l));
  if (raw) return { lines: indented(body) };
  if (markdown) return { lines: indented(expandLines(r.path, body, depth + 1, [...stack, r.path], st).out) };
  return { lines: fenced(body, language, indent) };
}

function fenced(lines: string[], language: string, indent: string): string[] {
  let ticks = '```';
  while (lines.some((l) => l.trimStart().startsWith(ticks))) ticks += '`';
  return [indent + ticks + language, ...lines.map((l) => (l === '' ? '' : indent + l)), indent + ticks];
}

/** A page to gather the includes of. */
export interface IncludingPage {
  path: string;
  format: string;
  text: string;
}

/**
 * Makes the text of every file the pages' directives name available before expansion, nested
 * includes too: one `read` per nesting level with the root paths whose text is not known yet
 * (`files.text` undefined); `read` must make them known or leave them unreadable.
 */
export async function gatherIncludes(
  pages: readonly IncludingPage[],
  files: IncludeFiles,
  read: (paths: string[]) => Promise<void>,
  limits: IncludeLimits = DEFAULT_INCLUDE_LIMITS,
): Promise<void> {
  const seen = new Set(pages.map((p) => p.path));
  const asked = new Set<string>();
  let level: readonly IncludingPage[] = pages;
  for (let depth = 0; depth < limits.maxDepth && level.length > 0; depth++) {
    const wanted = new Set<string>();
    for (const page of level) {
      for (const t of findIncludeTargets(page.text, page.format)) {
        const r = resolveIncludePath(page.path, t.file, (p) => files.exists(p), t.scope, files.root);
        if ('path' in r) wanted.add(r.path);
      }
    }
    const fresh = [...wanted].filter((p) => !asked.has(p) && files.text(p) === undefined);
    for (const p of fresh) asked.add(p);
    if (fresh.length > 0) await read(fresh.sort());
    const next: IncludingPage[] = [];
    for (const p of [...wanted].sort()) {
      if (seen.has(p) || languageOf(p) !== 'markdown') continue;
      seen.add(p);
      const text = files.text(p);
      if (text !== undefined) next.push({ path: p, format: 'markdown', text });
    }
    level = next;
  }
}

/** One warning line for the unexpanded directives of a page (the same problem once, at most five). */
export function includeWarning(path: string, problems: readonly string[]): string {
  const distinct = [...new Set(problems)];
  const shown = distinct.slice(0, 5).join('; ');
  const more = distinct.length > 5 ? `; and ${distinct.length - 5} more` : '';
  const what = problems.length === 1 ? 'an include directive was' : `${problems.length} include directives were`;
  return `${path}: ${what} left as written: ${shown}${more}`;
}
