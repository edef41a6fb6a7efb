/**
 * The include directives documentation sites use to build a page from shared files, as they
 * appear on one line of a Markdown page:
 *
 * - Hugo: `{{% include "/_common/glob-patterns.md" %}}` and `{{< include "path" >}}` (a path
 *   relative to the content root; see resolve.ts). Hugo's escaped form (`{{%/*`, shown in
 *   docs about shortcodes) is not a directive;
 * - mkdocs snippets: `--8<-- "path"`, `--8<-- "path:10:20"` (lines 10-20), `--8<-- "path:name"`
 *   (a `--8<-- [start:name]` ... `[end:name]` section), and the block form between two `--8<--`;
 *   the only form also read inside a code fence;
 * - FastAPI: `{* ../../docs_src/app/tutorial001.py hl[3] ln[1:10] *}` (`ln` picks line ranges);
 * - VitePress: `<!--@include: ./parts/basics.md-->`, with `{3,10}` line ranges or `#region`;
 * - `!include path`, `!include-code path`, `!include-markdown path` and `{!path!}` lines.
 *
 * reStructuredText `.. literalinclude::` and AsciiDoc `include::` are read by their converters.
 */
import type { IncludeScope } from './resolve.ts';

export interface IncludeTarget {
  /** The path as written, without line or section selectors. */
  file: string;
  options: Record<string, string>;
  scope: IncludeScope;
}

export type DirectiveLine =
  | { kind: 'include'; target: IncludeTarget; indent: string }
  /** A bare `--8<--`: opens or closes a block of snippet paths, one per line. */
  | { kind: 'snippet-block' };

const FASTAPI = /^\s*\{\*\s*(\S+)(.*?)\*\}\s*$/;
const SNIPPET = /^(\s*)-{2}8<-{2}\s*(?:(["'])(.+?)\2|(\S+))?\s*$/;
const BANG_INCLUDE = /^\s*!include(?:-code|-markdown)?\s+["']?([^"'\s]+)["']?\s*$/;
const MD_INCLUDE = /^\s*\{!\s*(\S+?)\s*!\}\s*$/;
const HUGO_INCLUDE = /^\s*\{\{(?:%\s*include\s+(?:"([^"]+)"|`([^`]+)`)\s*%|<\s*include\s+(?:"([^"]+)"|`([^`]+)`)\s*>)\}\}\s*$/;
const VITEPRESS_INCLUDE = /^\s*<!--\s*@include:\s*([^\s{#]+?)(?:\{(\d*)(?:,(\d*))?\}|#([\w-]+))?\s*-->\s*$/;
const RST_LITERAL = /^\s*\.\.\s+literalinclude::\s*(\S+)/;
const ADOC_INCLUDE = /^include::([^[\]\s]+)\[/;
const FENCE_OPEN = /^(\s{0,3})(`{3,}|~{3,})(.*)$/;
const FENCE_CLOSE = /^\s{0,3}(`{3,}|~{3,})\s*$/;

/** Splits `path:10:20` / `path:name` (mkdocs snippet selectors) from the path. */
export function snippetTarget(spec: string): IncludeTarget {
  const m = /^(.*?\.[\w]+):(\d*):?(\d*)$/.exec(spec);
  if (m && (m[2] || m[3])) return { file: m[1], options: { lines: `${m[2] || '1'}-${m[3] || ''}` }, scope: 'nearest' };
  const s = /^(.*?\.[\w]+):([A-Za-z_][\w-]*)$/.exec(spec);
  if (s) return { file: s[1], options: { section: s[2] }, scope: 'nearest' };
  return { file: spec, options: {}, scope: 'nearest' };
}

/** FastAPI's `ln[1:10,12:14]` to `1-10,12-14`. */
function fastapiTarget(path: string, rest: string): IncludeTarget {
  const ln = /\bln\[([\d:,\s]+)\]/.exec(rest);
  return { file: path, options: ln ? { lines: ln[1].replace(/\s/g, '').replace(/:/g, '-') } : {}, scope: 'nearest' };
}

/** VitePress `path{3,10}` / `path#region`; `@/` is the source root. */
function vitepressTarget(m: RegExpExecArray): IncludeTarget {
  const site = m[1].startsWith('@/');
  const options: Record<string, string> = {};
  if (m[2] !== undefined || m[3] !== undefined) {
    const from = m[2] || '1';
    options.lines = m[3] === undefined ? (m[2] ? `${from}-` : '1-') : `${from}-${m[3]}`;
  }
  if (m[4]) options.section = m[4];
  return { file: site ? m[1].slice(1) : m[1], options, scope: site ? 'site' : 'nearest' };
}

/**
 * The directive on one line of a Markdown page, or null. Inside a code fence only mkdocs
 * snippets with a path count (they put code into the fence).
 */
export function parseDirective(line: string, inFence: boolean): DirectiveLine | null {
  if (!line.includes('8<') && !line.includes('include') && !line.includes('{*') && !line.includes('{!')) return null;
  const s = SNIPPET.exec(line);
  if (s) {
    const spec = s[3] ?? s[4];
    if (spec) return { kind: 'include', target: snippetTarget(spec), indent: s[1] };
    return inFence ? null : { kind: 'snippet-block' };
  }
  if (inFence) return null;
  const hugo = HUGO_INCLUDE.exec(line);
  if (hugo) return { kind: 'include', target: { file: (hugo[1] ?? hugo[2] ?? hugo[3] ?? hugo[4]).trim(), options: {}, scope: 'site' }, indent: '' };
  const fa = FASTAPI.exec(line);
  if (fa) return { kind: 'include', target: fastapiTarget(fa[1], fa[2]), indent: '' };
  const vp = VITEPRESS_INCLUDE.exec(line);
  if (vp) return { kind: 'include', target: vitepressTarget(vp), indent: '' };
  const bang = BANG_INCLUDE.exec(line) ?? MD_INCLUDE.exec(line);
  if (bang) return { kind: 'include', target: { file: bang[1], options: {}, scope: 'nearest' }, indent: '' };
  return null;
}

/** Follows code fences line by line: `update(line)` says whether the line is inside a fence. */
export class FenceTracker {
  private fence: { char: string; len: number } | null = null;

  /** True while inside a fence (the opening and closing lines count as fence lines). */
  get inside(): boolean {
    return this.fence !== null;
  }

  /** Feeds one line; returns 'open', 'close' or null when the line is not a fence delimiter. */
  update(line: string): 'open' | 'close' | null {
    if (this.fence) {
      const close = FENCE_CLOSE.exec(line);
      if (close && close[1][0] === this.fence.char && close[1].length >= this.fence.len) {
        this.fence = null;
        return 'close';
      }
      return null;
    }
    const open = FENCE_OPEN.exec(line);
    if (open && !(open[2][0] === '`' && open[3].includes('`'))) {
      this.fence = { char: open[2][0], len: open[2].length };
      return 'open';
    }
    return null;
  }
}

/** Every include target a page names, by format ('markdown'/'mdx', 'rst', 'asciidoc'). */
export function findIncludeTargets(text: string, format: string): IncludeTarget[] {
  const out: IncludeTarget[] = [];
  const lines = text.split(/\r?\n/);
  if (format === 'rst' || format === 'asciidoc') {
    const re = format === 'rst' ? RST_LITERAL : ADOC_INCLUDE;
    for (const line of lines) {
      const m = re.exec(line);
      if (m) out.push({ file: m[1], options: {}, scope: 'nearest' });
    }
    return out;
  }
  if (format !== 'markdown' && format !== 'mdx') return out;
  const fences = new FenceTracker();
  let block = false;
  for (const line of lines) {
    if (block) {
      const d = parseDirective(line, false);
      if (d?.kind === 'snippet-block') block = false;
      else if (line.trim() !== '') out.push(snippetTarget(line.trim()));
      continue;
    }
    const inFence = fences.inside;
    if (fences.update(line) !== null) continue;
    const d = parseDirective(line, inFence);
    if (d?.kind === 'include') out.push(d.target);
    else if (d?.kind === 'snippet-block') block = true;
  }
  return out;
}
