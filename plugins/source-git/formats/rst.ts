/**
 * reStructuredText to Markdown, line for line: each original line becomes one line of Markdown
 * (an empty one for adornments and dropped directives), except where a `literalinclude` puts a
 * file's code or a fence closes right after a code body; rstToMarkdownLines gives the Markdown per
 * original line, from which the git source builds the document's line map (core/includes).
 *
 * - Section titles (underlined, optionally overlined) become `#` headings, levels in order of
 *   first appearance of each adornment style; adornment lines become empty.
 * - `.. code-block:: lang` / `.. code::` / `.. sourcecode::` and `::` literal blocks become fenced
 *   code (the fence opens on the blank line before the body and closes on the blank line after).
 * - `.. literalinclude:: path` is resolved through `include` when given (see core/includes).
 * - Admonitions (`.. note::`) become a bold label with their body dedented; other directives,
 *   comments and link targets become empty lines.
 * - Inline roles (:func:`x`) and ``literals`` become `code`; `text <url>`_ links become
 *   Markdown links.
 */

/** Resolves an include directive to code lines, or null when it cannot be read. */
export type IncludeLines = (target: string, options: Record<string, string>) => { lines: string[]; language: string } | null;

const ADORN = /^([=\-`:'"~^_*+#<>.])\1{2,}\s*$/;
const DIRECTIVE = /^(\s*)\.\.\s+([\w:-]+)::\s*(.*)$/;
const CODE_DIRECTIVES = new Set(['code-block', 'code', 'sourcecode', 'literalinclude', 'highlight', 'doctest', 'testcode', 'ipython', 'jupyter-execute', 'prompt']);
const ADMONITIONS = new Set(['note', 'warning', 'tip', 'important', 'hint', 'caution', 'danger', 'attention', 'error', 'seealso', 'admonition', 'versionadded', 'versionchanged', 'deprecated', 'todo', 'topic', 'sidebar', 'rubric']);

function indentOf(line: string): number {
  return /^\s*/.exec(line)![0].replace(/\t/g, '        ').length;
}

function inline(text: string): string {
  return text
    .replace(/:[\w:+-]+:`([^`]+)`/g, (_, t: string) => '`' + t.replace(/^~/, '').replace(/^(.*?)\s*<(.+)>$/, '$1') + '`')
    .replace(/``([^`]+)``/g, '`$1`')
    .replace(/`([^`<]+?)\s*<([^>]+)>`__?/g, '[$1]($2)')
    .replace(/`([^`]+)`_\b/g, '$1');
}

/** The end (exclusive) of an indented body starting after line `from`, deeper than `indent`. */
function bodyEnd(lines: string[], from: number, indent: number): number {
  let end = from;
  let k = from;
  while (k < lines.length) {
    const l = lines[k];
    if (l.trim() === '') {
      k++;
      continue;
    }
    if (indentOf(l) <= indent) break;
    end = k + 1;
    k++;
  }
  return end;
}

export function rstToMarkdown(source: string, include?: IncludeLines): string {
  return rstToMarkdownLines(source, include).join('\n');
}

/**
 * The Markdown of each original line (index i: line i + 1; an entry may hold several lines when
 * an include was expanded there or a fence closes on it; one closing fence may follow the end).
 */
export function rstToMarkdownLines(source: string, include?: IncludeLines): string[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = lines.map(() => '');
  const levels: string[] = [];
  let defaultLanguage = '';
  let extra: string[] = [];
  const levelOf = (style: string) => {
    let i = levels.indexOf(style);
    if (i < 0) i = levels.push(style) - 1;
    return Math.min(i + 1, 6);
  };

  /** Emits a fenced block for body lines [start, end) at `indent`; the fence uses free lines around it. */
  const fence = (openAt: number, start: number, end: number, language: string, indent: number): number => {
    out[openAt] = '```' + language;
    const cut = (l: string) => l.replace(/\t/g, '        ').slice(Math.min(indent, indentOf(l)));
    for (let k = start; k < end; k++) out[k] = lines[k].trim() === '' ? '' : cut(lines[k]);
    if (end < lines.length && lines[end].trim() === '') {
      out[end] = '```';
      return end + 1;
    }
    if (end < lines.length) {
      // No free line after the body: close the fence on the body's last line.
      out[end - 1] = out[end - 1] + '\n```';
    } else extra = ['```'];
    return end;
  };

  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const next = lines[i + 1] ?? '';

    // Overlined title: adornment, title, adornment.
    if (ADORN.test(line) && lines[i + 2] !== undefined && ADORN.test(lines[i + 2]) && next.trim() !== '' && line.trim()[0] === lines[i + 2].trim()[0]) {
      out[i + 1] = '#'.repeat(levelOf('o' + line.trim()[0])) + ' ' + inline(next.trim());
      i += 3;
      continue;
    }
    // Underlined title: text, adornment at least as long as the text.
    if (line.trim() !== '' && !/^\s/.test(line) && ADORN.test(next) && next.trim().length >= Math.min(line.trim().length, 3) && !ADORN.test(line)) {
      out[i] = '#'.repeat(levelOf('u' + next.trim()[0])) + ' ' + inline(line.trim());
      i += 2;
      continue;
    }

    const d = DIRECTIVE.exec(line);
    if (d) {
      const [, ind, name, arg] = d;
      const indent = ind.length;
      // Options (:linenos:) follow the directive line, then a blank line, then the body.
      let k = i + 1;
      const options: Record<string, string> = {};
      while (k < lines.length && /^\s+:[\w-]+:/.test(lines[k]) && indentOf(lines[k]) > indent) {
        const m = /^\s+:([\w-]+):\s*(.*)$/.exec(lines[k])!;
        options[m[1]] = m[2].trim();
        k++;
      }
      const end = bodyEnd(lines, k, indent);
      if (name === 'highlight') {
        defaultLanguage = arg.trim();
        i = Math.max(end, k);
        continue;
      }
      if (name === 'literalinclude') {
        const got = include?.(arg.trim(), options) ?? null;
        if (got) {
          const lang = options.language ?? got.language;
          out[i] = ['```' + lang, ...got.lines, '```'].join('\n');
        }
        i = Math.max(end, k);
        continue;
      }
      if (CODE_DIRECTIVES.has(name)) {
        // The body starts at the first non-blank line after the options.
        let s = k;
        while (s < end && lines[s].trim() === '') s++;
        if (s < end) {
          const bodyIndent = Math.min(...lines.slice(s, end).filter((l) => l.trim() !== '').map(indentOf));
          const lang = (arg.trim().split(/\s+/)[0] || defaultLanguage).replace(/^pycon$/, 'python');
          // The fence opens on the blank line before the body, else on the directive line itself.
          i = fence(s > i + 1 && lines[s - 1].trim() === '' ? s - 1 : i, s, end, lang, bodyIndent);
          continue;
        }
        i = Math.max(end, k);
        continue;
      }
      if (ADMONITIONS.has(name)) {
        const label = name === 'admonition' || name === 'topic' || name === 'sidebar' || name === 'rubric' ? arg.trim() : name[0].toUpperCase() + name.slice(1) + (arg.trim() ? ': ' + arg.trim() : '');
        out[i] = label ? `**${inline(label)}**` : '';
        for (let m = k; m < end; m++) out[m] = inline(lines[m].trim());
        i = Math.max(end, k);
        continue;
      }
      // Other directives (toctree, automodule, image, ...): dropped with their bodies.
      i = Math.max(end, k);
      continue;
    }
    // Comments and link targets: `.. anything` not a directive.
    if (/^\s*\.\.(\s|$)/.test(line)) {
      const end = bodyEnd(lines, i + 1, indentOf(line));
      i = Math.max(end, i + 1);
      continue;
    }

    // A literal block: a paragraph ending in `::`, a blank line, an indented body.
    if (/::\s*$/.test(line) && next.trim() === '') {
      let s = i + 2;
      while (s < lines.length && lines[s].trim() === '') s++;
      const indent = indentOf(line);
      if (s < lines.length && indentOf(lines[s]) > indent) {
        const end = bodyEnd(lines, s, indent);
        out[i] = inline(line.replace(/\s*::\s*$/, line.trim() === '::' ? '' : ':').trimStart());
        i = fence(s - 1, s, end, defaultLanguage, Math.min(...lines.slice(s, end).filter((l) => l.trim() !== '').map(indentOf)));
        continue;
      }
    }

    // Prose: dedented so Markdown does not read indentation as code; adornment-only lines dropped.
    out[i] = ADORN.test(line) ? '' : inline(/^\s{4,}/.test(line) ? line.trim() : line);
    i++;
  }
  return [...out, ...extra];
}
