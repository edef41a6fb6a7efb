/**
 * Line-preserving clean-up of documentation dialects before the markdown parser sees them.
 * Every transformation replaces whole lines by other lines (usually empty ones), so the line
 * numbers of the cleaned text are exactly those of the original file.
 *
 * Outside code fences it handles:
 * - MDX: top-level `import`/`export` statements, `{/* comments *\/}`, JSX/HTML tag-only lines
 *   (also multi-line opening tags), so fences inside <Tabs>/<Callout> parse as fences;
 * - VitePress/Docusaurus containers (`::: tip`, `:::`), FastAPI/pymdown blocks (`/// tip`, `///`);
 * - Hugo shortcodes: `{{< highlight go >}}` ... `{{< /highlight >}}` become fences, other
 *   shortcode-only lines are dropped (their inline uses are stripped from text later);
 * - include directives that a chunker cannot resolve (FastAPI `{* path *}`, mkdocs `--8<--`,
 *   VitePress `<!--@include: -->`, Hugo `{{% include %}}`): dropped, and reported;
 * - nesting deeper than any real page uses (indentation past MAX_INDENT columns, more than
 *   MAX_CONTAINERS block quote or list markers opening one line) is flattened to that depth: the
 *   markdown parser's time grows with the square of the depth (a 500-level list took 2.8 s, 2,000
 *   levels over two minutes), so one hostile or broken file could stall an ingest.
 */

export interface PreprocessResult {
  text: string;
  /** Include directives that were dropped because the chunker cannot resolve them. */
  unresolvedIncludes: string[];
}

const FENCE_OPEN = /^(\s{0,3})(`{3,}|~{3,})(.*)$/;
const TAG_ONLY = /^\s*(<\/?[A-Za-z][\w.:-]*(\s+[^<>]*?)?\/?>\s*)+$/;
const TAG_START = /^\s*<[A-Za-z][\w.:-]*(\s|$)/;
const JSX_COMMENT = /^\s*\{\/\*.*\*\/\}\s*$/;
const CONTAINER = /^\s*:{3,}/;
const PYMDOWN_BLOCK = /^\s*\/{3}(\s|$)/;
const HUGO_SHORTCODE_LINE = /^\s*(\{\{[<%][\s\S]*?[>%]\}\}\s*)+$/;
const HUGO_HIGHLIGHT_OPEN = /^\s*\{\{[<%]\s*(highlight|code)\s+"?([\w+#.-]*)"?[^}]*[>%]\}\}\s*$/;
const HUGO_HIGHLIGHT_CLOSE = /^\s*\{\{[<%]\s*\/\s*(highlight|code)\s*[>%]\}\}\s*$/;
const HUGO_CODE_TOGGLE_OPEN = /^\s*\{\{[<%]\s*code-toggle\b[^}]*[>%]\}\}\s*$/;
const HUGO_CODE_TOGGLE_CLOSE = /^\s*\{\{[<%]\s*\/\s*code-toggle\s*[>%]\}\}\s*$/;
const HUGO_INCLUDE = /^\s*\{\{[<%]\s*include\s+"([^"]+)"/;
const FASTAPI_INCLUDE = /^\s*\{\*\s*(\S+).*\*\}\s*$/;
const MKDOCS_SNIPPET = /^\s*-{2}8<-{2}\s*(.*)$/;
const VITEPRESS_INCLUDE = /^\s*<!--\s*@include:\s*(.*?)\s*-->\s*$/;
const ESM_LINE = /^(import|export)\s/;
/** Deepest indentation kept, in columns (tabs count 4): 16 levels of 4-space nesting. */
export const MAX_INDENT = 64;
/** Most block quote or list markers kept at the start of one line. */
export const MAX_CONTAINERS = 16;
const CONTAINER_MARKER = /^[ \t]*(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t]))/;

export function preprocess(source: string, format: string): PreprocessResult {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = new Array(lines.length);
  const unresolvedIncludes: string[] = [];
  const isMdx = format === 'mdx';
  let fence: { char: string; len: number } | null = null;
  let inFrontMatter = false;
  let i = 0;

  const drop = (k: number) => {
    out[k] = '';
  };

  while (i < lines.length) {
    const line = lines[i];

    // Front matter is left to the parser; do not treat its lines as anything else.
    if (i === 0 && /^(---|\+\+\+)\s*$/.test(line)) {
      inFrontMatter = true;
      out[i] = line;
      i++;
      continue;
    }
    if (inFrontMatter) {
      out[i] = line;
      if (/^(---|\+\+\+)\s*$/.test(line)) inFrontMatter = false;
      i++;
      continue;
    }

    if (fence) {
      out[i] = line;
      const close = line.match(/^\s{0,3}(`{3,}|~{3,})\s*$/);
      if (close && close[1][0] === fence.char && close[1].length >= fence.len) fence = null;
      i++;
      continue;
    }

    const open = line.match(FENCE_OPEN);
    if (open && !(open[2][0] === '`' && open[3].includes('`'))) {
      fence = { char: open[2][0], len: open[2].length };
      out[i] = line;
      i++;
      continue;
    }

    // Hugo highlight/code/code-toggle shortcodes wrap code: turn them into fences.
    const wrap = line.includes('/*') ? null : hugoCodeWrapper(line);
    if (wrap) {
      const end = findLine(lines, i + 1, wrap.close);
      if (end > 0) {
        out[i] = '~~~~' + (wrap.language ?? guessConfigLanguage(lines.slice(i + 1, end)));
        for (let k = i + 1; k < end; k++) out[k] = lines[k];
        out[end] = '~~~~';
        i = end + 1;
        continue;
      }
    }

    const hugoInclude = line.match(HUGO_INCLUDE);
    if (hugoInclude && !line.includes('/*')) {
      unresolvedIncludes.push(hugoInclude[1]);
      drop(i++);
      continue;
    }
    const fastapi = line.match(FASTAPI_INCLUDE);
    if (fastapi) {
      unresolvedIncludes.push(fastapi[1]);
      drop(i++);
      continue;
    }
    const snippet = line.match(MKDOCS_SNIPPET);
    if (snippet) {
      if (snippet[1]) unresolvedIncludes.push(snippet[1].replace(/^["']|["']$/g, ''));
      drop(i++);
      continue;
    }
    const vpInclude = line.match(VITEPRESS_INCLUDE);
    if (vpInclude) {
      unresolvedIncludes.push(vpInclude[1]);
      drop(i++);
      continue;
    }

    if (HUGO_SHORTCODE_LINE.test(line) || CONTAINER.test(line) || PYMDOWN_BLOCK.test(line) || JSX_COMMENT.test(line)) {
      drop(i++);
      continue;
    }

    // MDX (and React's .md pages) ESM statements at top level.
    if ((isMdx || format === 'markdown') && ESM_LINE.test(line) && looksLikeEsm(line)) {
      const end = endOfStatement(lines, i);
      for (let k = i; k <= end; k++) drop(k);
      i = end + 1;
      continue;
    }

    // Lines that hold only JSX/HTML tags: drop, so the content between them parses as markdown.
    if (TAG_ONLY.test(line)) {
      drop(i++);
      continue;
    }
    // A multi-line opening tag: `<Foo` ... `>` over several lines, with no markdown inside.
    if (TAG_START.test(line) && !line.includes('>')) {
      const end = endOfTag(lines, i);
      if (end > i) {
        for (let k = i; k <= end; k++) drop(k);
        i = end + 1;
        continue;
      }
    }

    // React-style heading ids `## Title {/*title-id*/}` become `{ #title-id }`.
    out[i] = /^\s{0,3}#{1,6}\s/.test(line) ? line.replace(/\s*\{\/\*\s*([\w.-]+)\s*\*\/\}\s*$/, ' { #$1 }') : capNesting(line);
    i++;
  }
  return { text: out.join('\n'), unresolvedIncludes };
}

/**
 * The line with its indentation cut to MAX_INDENT columns and its opening block quote / list
 * markers to MAX_CONTAINERS (the text after them is kept).
 */
export function capNesting(line: string): string {
  const indent = line.match(/^[ \t]*/)![0];
  let width = 0;
  for (const ch of indent) width += ch === '\t' ? 4 - (width % 4) : 1;
  if (width > MAX_INDENT) line = ' '.repeat(MAX_INDENT) + line.slice(indent.length);
  let rest = line;
  let kept = '';
  for (let n = 0; ; n++) {
    const m = rest.match(CONTAINER_MARKER);
    if (!m) return line;
    if (n === MAX_CONTAINERS) {
      // Drop the extra markers, keep the text.
      let tail = rest;
      for (let t = tail.match(CONTAINER_MARKER); t; t = tail.match(CONTAINER_MARKER)) tail = tail.slice(t[0].length);
      return kept + ' ' + tail.replace(/^[ \t]+/, '');
    }
    kept += m[0];
    rest = rest.slice(m[0].length);
  }
}

/** A Hugo shortcode that opens a code block: its closing pattern and language (null: guess). */
function hugoCodeWrapper(line: string): { close: RegExp; language: string | null } | null {
  const hl = line.match(HUGO_HIGHLIGHT_OPEN);
  if (hl) return { close: HUGO_HIGHLIGHT_CLOSE, language: hl[2] };
  if (HUGO_CODE_TOGGLE_OPEN.test(line)) return { close: HUGO_CODE_TOGGLE_CLOSE, language: null };
  return null;
}

function findLine(lines: string[], from: number, re: RegExp): number {
  for (let k = from; k < lines.length && k < from + 2000; k++) if (re.test(lines[k])) return k;
  return -1;
}

function looksLikeEsm(line: string): boolean {
  return /^import\s+(type\s+)?([\w*{]|['"])/.test(line) || /^export\s+(const|let|var|function|default|\{|\*|type|interface|async)/.test(line);
}

/** The last line of an import/export statement that starts at `start` (balanced braces). */
function endOfStatement(lines: string[], start: number): number {
  let depth = 0;
  for (let k = start; k < lines.length && k < start + 200; k++) {
    for (const ch of lines[k]) {
      if (ch === '{' || ch === '(' || ch === '[') depth++;
      else if (ch === '}' || ch === ')' || ch === ']') depth--;
    }
    if (depth <= 0) {
      const next = lines[k + 1] ?? '';
      // `import x from` split over lines: continue while the next line continues the statement.
      if (/^\s*from\s/.test(next)) continue;
      return k;
    }
  }
  return start;
}

function endOfTag(lines: string[], start: number): number {
  for (let k = start + 1; k < lines.length && k < start + 30; k++) {
    const l = lines[k];
    if (l.trim() === '') return -1;
    if (/>\s*$/.test(l)) return k;
  }
  return -1;
}

function guessConfigLanguage(body: string[]): string {
  const text = body.join('\n');
  if (/^\s*\[[\w.]+\]\s*$/m.test(text) || /^\s*[\w.-]+\s*=\s*/m.test(text)) return 'toml';
  if (/^\s*[{[]/.test(text)) return 'json';
  return 'yaml';
}

/** Removes inline Hugo shortcodes and MDX expressions that survive in prose. */
export function stripInlineMarkup(text: string): string {
  return text
    .replace(/\{\{[<%]\s*\/?[\w.-]+[^}]*?[>%]\}\}/g, '')
    .replace(/\{\s*#[\w-]+\s*\}/g, '')
    .replace(/[ \t]+$/gm, '');
}
