/**
 * AsciiDoc to Markdown, line for line (the same number of lines, so snippet line ranges point
 * at the original file; the lines an `include::` brings in are mapped to the directive's line
 * through the document's line map, see core/includes):
 *
 * - `= Title`, `== Section` ... become `#`, `##` ... headings;
 * - `[source,lang]` + `----` listing blocks, bare `----` listings and `....` literal blocks
 *   become fenced code (the attribute line becomes empty, the delimiters become the fences);
 * - `.Block title` lines become bold text; `NOTE:` style admonitions a bold label;
 * - attribute entries (`:toc:`), comments (`//`, `////` blocks), block attribute lines (`[...]`)
 *   and example/sidebar/quote delimiters (`====`, `****`, `____`) become empty lines;
 * - `link:url[text]` and `https://url[text]` become Markdown links.
 */
import type { IncludeLines } from './rst.ts';

const HEADING = /^(={1,6})\s+(\S.*?)\s*=*\s*$/;
const SOURCE_ATTR = /^\[(source|listing)(?:,\s*([\w+#.-]+))?[^\]]*\]\s*$/;
const ATTR_ENTRY = /^:!?[\w-]+!?:(\s.*)?$/;
const ADMONITION = /^(NOTE|TIP|IMPORTANT|WARNING|CAUTION):\s+(.*)$/;
const INCLUDE = /^include::([^[\]\s]+)\[(.*)\]\s*$/;

function inline(text: string): string {
  return text
    .replace(/\blink:([^\s[]+)\[([^\]]*)\]/g, (_, url: string, label: string) => `[${label || url}](${url})`)
    .replace(/(^|[\s(])(https?:\/\/[^\s[]+)\[([^\]]+)\]/g, '$1[$3]($2)')
    .replace(/\bxref:([^\s[]+)\[([^\]]*)\]/g, (_, ref: string, label: string) => label || ref)
    .replace(/<<([^,>]+)(?:,\s*([^>]+))?>>/g, (_, ref: string, label?: string) => label ?? ref);
}

export function asciidocToMarkdown(source: string, include?: IncludeLines): string {
  return asciidocToMarkdownLines(source, include).join('\n');
}

/** The Markdown of each original line (index i: line i + 1; an `include::` may give several lines). */
export function asciidocToMarkdownLines(source: string, include?: IncludeLines): string[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = new Array(lines.length).fill('');
  let pendingLanguage: string | null = null;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];

    if (/^\/{4,}\s*$/.test(line)) {
      let k = i + 1;
      while (k < lines.length && !/^\/{4,}\s*$/.test(lines[k])) k++;
      i = k + 1;
      continue;
    }
    if (/^\/\/(?!\/)/.test(line)) {
      i++;
      continue;
    }

    const attr = SOURCE_ATTR.exec(line);
    if (attr) {
      pendingLanguage = attr[2] ?? '';
      i++;
      continue;
    }

    const delim = /^(-{4,}|\.{4,}|`{3,}.*)\s*$/.exec(line);
    if (delim) {
      const isFence = line.startsWith('```');
      const close = isFence ? /^`{3,}\s*$/ : new RegExp(`^${delim[1].replace(/\./g, '\\.')}\\s*$`);
      let k = i + 1;
      while (k < lines.length && !close.test(lines[k])) k++;
      const language = isFence ? line.replace(/^`+/, '').trim() : (pendingLanguage ?? '');
      out[i] = '```' + language;
      for (let m = i + 1; m < k && m < lines.length; m++) {
        const inc = INCLUDE.exec(lines[m]);
        const got = inc ? include?.(inc[1], parseIncludeAttrs(inc[2])) : null;
        out[m] = got ? got.lines.join('\n') : lines[m];
      }
      if (k < lines.length) out[k] = '```';
      else out.push('```');
      pendingLanguage = null;
      i = k + 1;
      continue;
    }
    pendingLanguage = null;

    if (/^\+{4,}\s*$/.test(line) || /^(={4,}|\*{4,}|_{4,}|-{2})\s*$/.test(line) || /^\[[^\]]*\]\s*$/.test(line) || ATTR_ENTRY.test(line)) {
      i++;
      continue;
    }
    const h = HEADING.exec(line);
    if (h) {
      out[i] = '#'.repeat(h[1].length) + ' ' + inline(h[2]);
      i++;
      continue;
    }
    if (/^\.[^.\s]/.test(line)) {
      out[i] = `**${inline(line.slice(1).trim())}**`;
      i++;
      continue;
    }
    const adm = ADMONITION.exec(line);
    if (adm) {
      out[i] = `**${adm[1][0]}${adm[1].slice(1).toLowerCase()}:** ${inline(adm[2])}`;
      i++;
      continue;
    }
    const inc = INCLUDE.exec(line);
    if (inc) {
      const got = include?.(inc[1], parseIncludeAttrs(inc[2]));
      if (got) out[i] = (got.language === 'markdown' ? got.lines : ['```' + got.language, ...got.lines, '```']).join('\n');
      i++;
      continue;
    }
    out[i] = inline(line.replace(/^\s{4,}/, ''));
    i++;
  }
  return out;
}

/** `lines=3..10` and `tag=name` of an AsciiDoc include, as the option names core/includes/select.ts reads. */
function parseIncludeAttrs(text: string): Record<string, string> {
  const opts: Record<string, string> = {};
  for (const part of text.split(',')) {
    const [k, v] = part.split('=').map((s) => s.trim().replace(/^"|"$/g, ''));
    if (k === 'lines' && v) opts.lines = v.replace('..', '-');
    if ((k === 'tag' || k === 'tags') && v) opts.tag = v;
  }
  return opts;
}
