/**
 * Include directives that pull example code from the repository into a page:
 *
 * - FastAPI: `{* ../../docs_src/app/tutorial001.py hl[3] ln[1:10] *}` (`ln` picks line ranges);
 * - mkdocs snippets: `--8<-- "path"`, `--8<-- "path:10:20"` (lines 10-20), `--8<-- "path:name"`
 *   (a `--8<-- [start:name]` ... `[end:name]` section), and the block form between two `--8<--`;
 * - `!include path`, `!include-code path` and `{!path!}` lines;
 * - reStructuredText `.. literalinclude::` (`:lines:`, `:start-after:`, `:end-before:`) and
 *   AsciiDoc `include::path[lines=..,tag=..]`, through formats/rst.ts and formats/asciidoc.ts.
 *
 * A target is looked up relative to the page's folder, then to each parent folder up to the
 * repository root (FastAPI resolves from the mkdocs.yml folder, mkdocs snippets from the root),
 * among the repository's regular files only; a path that leaves the repository is refused.
 *
 * Line numbers: the directive line is replaced by the included code as a fenced block (raw lines
 * when the directive sits inside a fence, or when a Markdown file includes Markdown). Snippet line
 * ranges therefore refer to the page with its includes expanded: lines before the first include
 * are those of the original file, later ones are shifted by the lines each include added.
 */
import { posix } from 'node:path';

export interface IncludeTarget {
  /** The path as written, before line/section selectors. */
  file: string;
  options: Record<string, string>;
}

/** Reads an include target of the current page: its repository path and text, or a problem. */
export type IncludeReader = (file: string) => { path: string; text: string } | { problem: string };

const FENCE_OPEN = /^(\s{0,3})(`{3,}|~{3,})(.*)$/;
const FASTAPI = /^\s*\{\*\s*(\S+)(.*?)\*\}\s*$/;
const SNIPPET = /^(\s*)-{2}8<-{2}\s*(?:(["'])(.+?)\2|(\S+))?\s*$/;
const BANG_INCLUDE = /^\s*!include(?:-code|-markdown)?\s+["']?([^"'\s]+)["']?\s*$/;
const MD_INCLUDE = /^\s*\{!\s*(\S+?)\s*!\}\s*$/;
const RST_LITERAL = /^\s*\.\.\s+literalinclude::\s*(\S+)/;
const ADOC_INCLUDE = /^include::([^[\]\s]+)\[/;

const LANGUAGES: Record<string, string> = {
  py: 'python', js: 'javascript', mjs: 'javascript', cjs: 'javascript', ts: 'typescript', tsx: 'tsx', jsx: 'jsx', go: 'go', rs: 'rust',
  java: 'java', kt: 'kotlin', rb: 'ruby', sh: 'bash', bash: 'bash', zsh: 'bash', ps1: 'powershell', yaml: 'yaml', yml: 'yaml', json: 'json',
  toml: 'toml', ini: 'ini', html: 'html', css: 'css', scss: 'scss', c: 'c', h: 'c', cpp: 'cpp', cc: 'cpp', hpp: 'cpp', cs: 'csharp',
  php: 'php', swift: 'swift', sql: 'sql', md: 'markdown', mdx: 'markdown', dart: 'dart', scala: 'scala', ex: 'elixir', exs: 'elixir',
  lua: 'lua', r: 'r', vue: 'vue', svelte: 'svelte', graphql: 'graphql', proto: 'protobuf', xml: 'xml', dockerfile: 'dockerfile', tf: 'hcl',
};

export function languageOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  if (name === 'dockerfile') return 'dockerfile';
  const dot = name.lastIndexOf('.');
  return dot >= 0 ? (LANGUAGES[name.slice(dot + 1)] ?? '') : '';
}

/** Splits `path:10:20` / `path:name` (mkdocs snippet selectors) from the path. */
function snippetTarget(spec: string): IncludeTarget {
  const m = /^(.*?\.[\w]+):(\d*):?(\d*)$/.exec(spec);
  if (m && (m[2] || m[3])) return { file: m[1], options: { lines: `${m[2] || '1'}-${m[3] || ''}` } };
  const s = /^(.*?\.[\w]+):([A-Za-z_][\w-]*)$/.exec(spec);
  if (s) return { file: s[1], options: { section: s[2] } };
  return { file: spec, options: {} };
}

/** FastAPI's `ln[1:10,12:14]` to `1-10,12-14`. */
function fastapiTarget(path: string, rest: string): IncludeTarget {
  const ln = /\bln\[([\d:,\s]+)\]/.exec(rest);
  return { file: path, options: ln ? { lines: ln[1].replace(/\s/g, '').replace(/:/g, '-') } : {} };
}

/** Every include target a page names (to fetch them before expanding), by format. */
export function findIncludeTargets(text: string, format: string): string[] {
  const out: string[] = [];
  let block = false;
  for (const line of text.split(/\r?\n/)) {
    if (format === 'rst') {
      const m = RST_LITERAL.exec(line);
      if (m) out.push(m[1]);
      continue;
    }
    if (format === 'asciidoc') {
      const m = ADOC_INCLUDE.exec(line);
      if (m) out.push(m[1]);
      continue;
    }
    const s = SNIPPET.exec(line);
    if (s) {
      const spec = s[3] ?? s[4];
      if (spec) out.push(snippetTarget(spec).file);
      else block = !block;
      continue;
    }
    if (block && line.trim() !== '') {
      out.push(snippetTarget(line.trim()).file);
      continue;
    }
    const m = FASTAPI.exec(line) ?? BANG_INCLUDE.exec(line) ?? MD_INCLUDE.exec(line);
    if (m) out.push(m[1]);
  }
  return out;
}

/**
 * Where an include target of `docPath` lives: the nearest folder (the page's, then its parents)
 * where it exists. `refused` when every candidate leaves the repository.
 */
export function resolveIncludePath(docPath: string, file: string, exists: (p: string) => boolean): { path: string } | { problem: string } {
  const clean = file.replace(/^["']|["']$/g, '');
  if (clean.includes('\0') || clean === '') return { problem: 'an empty path' };
  if (clean.startsWith('/')) {
    const p = posix.normalize(clean.slice(1));
    if (p.startsWith('..')) return { problem: `"${clean}" leaves the repository` };
    return exists(p) ? { path: p } : { problem: `"${clean}" is not a file of the repository` };
  }
  let dir = posix.dirname(docPath);
  let escaped = false;
  for (;;) {
    const p = posix.normalize(posix.join(dir === '.' ? '' : dir, clean));
    if (p.startsWith('../') || p === '..') escaped = true;
    else if (exists(p)) return { path: p };
    if (dir === '.' || dir === '') break;
    dir = posix.dirname(dir);
  }
  return { problem: escaped ? `"${clean}" leaves the repository` : `"${clean}" is not a file of the repository` };
}

/** Applies line ranges (`3-10,12`), a mkdocs section, an AsciiDoc tag, or rst start-after/end-before. */
export function selectLines(text: string, options: Record<string, string>): string[] {
  let lines = text.replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n');
  const marker = (name: string, kind: 'start' | 'end') =>
    new RegExp(`(--8<--\\s*\\[${kind}:${name}\\]|${kind === 'start' ? 'tag' : 'end'}::${name}\\[\\])`);
  const section = options.section ?? options.tag;
  if (section) {
    const start = lines.findIndex((l) => marker(section, 'start').test(l));
    const end = lines.findIndex((l, k) => k > start && marker(section, 'end').test(l));
    if (start >= 0) lines = lines.slice(start + 1, end > start ? end : undefined);
  }
  if (options['start-after']) {
    const k = lines.findIndex((l) => l.includes(options['start-after']));
    if (k >= 0) lines = lines.slice(k + 1);
  }
  if (options['end-before']) {
    const k = lines.findIndex((l) => l.includes(options['end-before']));
    if (k >= 0) lines = lines.slice(0, k);
  }
  if (options.lines) {
    const picked: string[] = [];
    for (const part of options.lines.split(',')) {
      const [a, b] = part.split('-');
      const from = Math.max(1, Number(a) || 1);
      const to = b === undefined ? from : b === '' ? lines.length : Number(b) || lines.length;
      picked.push(...lines.slice(from - 1, to));
    }
    lines = picked;
  }
  // Section markers of other sections are not part of the code.
  return lines.filter((l) => !/--8<--\s*\[(start|end):[\w-]+\]|\b(tag|end)::[\w-]+\[\]/.test(l));
}

function fenced(lines: string[], language: string, indent: string): string[] {
  let ticks = '```';
  while (lines.some((l) => l.trimStart().startsWith(ticks))) ticks += '`';
  return [indent + ticks + language, ...lines.map((l) => (l === '' ? '' : indent + l)), indent + ticks];
}

/**
 * Expands the include directives of a Markdown page. Unresolvable directives are left for the
 * chunker (which drops them) and reported through `problems`.
 */
export function expandMarkdownIncludes(text: string, read: IncludeReader, problems: string[]): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let fence: { char: string; len: number } | null = null;
  let block: string[] | null = null;

  const expand = (target: IncludeTarget, indent: string, original: string, raw: boolean): void => {
    const got = read(target.file);
    if ('problem' in got) {
      problems.push(got.problem);
      out.push(original);
      return;
    }
    const body = selectLines(got.text, target.options);
    const language = languageOf(got.path);
    if (raw || language === 'markdown') out.push(...body.map((l) => (l === '' ? '' : indent + l)));
    else out.push(...fenced(body, language, indent));
  };

  for (const line of lines) {
    if (block !== null) {
      const end = SNIPPET.exec(line);
      if (end && !end[3] && !end[4]) {
        for (const f of block) expand(snippetTarget(f), '', f, fence !== null);
        block = null;
      } else if (line.trim() !== '') block.push(line.trim());
      continue;
    }
    if (fence) {
      const close = /^\s{0,3}(`{3,}|~{3,})\s*$/.exec(line);
      if (close && close[1][0] === fence.char && close[1].length >= fence.len) fence = null;
      else {
        const s = SNIPPET.exec(line);
        if (s && (s[3] ?? s[4])) {
          expand(snippetTarget((s[3] ?? s[4])!), s[1], line, true);
          continue;
        }
      }
      out.push(line);
      continue;
    }
    const open = FENCE_OPEN.exec(line);
    if (open && !(open[2][0] === '`' && open[3].includes('`'))) {
      fence = { char: open[2][0], len: open[2].length };
      out.push(line);
      continue;
    }
    const fa = FASTAPI.exec(line);
    if (fa) {
      expand(fastapiTarget(fa[1], fa[2]), '', line, false);
      continue;
    }
    const s = SNIPPET.exec(line);
    if (s) {
      const spec = s[3] ?? s[4];
      if (spec) expand(snippetTarget(spec), s[1], line, false);
      else block = [];
      continue;
    }
    const bang = BANG_INCLUDE.exec(line) ?? MD_INCLUDE.exec(line);
    if (bang) {
      expand({ file: bang[1], options: {} }, '', line, false);
      continue;
    }
    out.push(line);
  }
  if (block !== null) out.push(...block);
  return out.join('\n');
}

/** rst `:lines:` / asciidoc `lines=` use the same `a-b,c` syntax as our own options. */
export function includeOptions(options: Record<string, string>): Record<string, string> {
  const o: Record<string, string> = {};
  if (options.lines) o.lines = options.lines.replace(/\s/g, '');
  if (options.tag) o.tag = options.tag;
  if (options['start-after']) o['start-after'] = options['start-after'];
  if (options['end-before']) o['end-before'] = options['end-before'];
  return o;
}
