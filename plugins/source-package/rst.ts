/**
 * reStructuredText to markdown, line for line (line N of the output is line N of the input, so
 * snippet line ranges point into the original file). Covers what package docs use most: section
 * titles (under- and overlined), `code-block`/`code`/`sourcecode` directives and `::` literal
 * blocks as fences, admonitions as bold labels, inline literals, roles and links. Anything else
 * stays as text.
 */

const ADORN = /^([=\-~^"'`#*+.:_<>!$%&,/;?@\\|])\1{2,}\s*$/;
const DIRECTIVE = /^(\s*)\.\.\s+([\w:-]+)::\s*(.*)$/;
const ADMONITIONS = new Set(['note', 'warning', 'tip', 'important', 'caution', 'danger', 'attention', 'hint', 'seealso', 'deprecated', 'versionadded', 'versionchanged']);

function inline(line: string): string {
  return line
    .replace(/``([^`]+)``/g, '`$1`')
    .replace(/:[\w:.-]+:`~?([^`<]+?)(?:\s*<[^>]+>)?`/g, '`$1`')
    .replace(/`([^`<]+?)\s*<(https?:[^>]+)>`__?/g, '[$1]($2)')
    .replace(/`([^`]+)`_\b/g, '$1');
}

function indentOf(line: string): number {
  return /^\s*/.exec(line)![0].length;
}

export function rstToMarkdown(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const out = [...lines];
  const levels: string[] = [];
  const level = (key: string): number => {
    let i = levels.indexOf(key);
    if (i < 0) {
      levels.push(key);
      i = levels.length - 1;
    }
    return Math.min(6, i + 1);
  };

  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    // Overlined title: ===, Title, ===
    if (ADORN.test(line) && i + 2 < lines.length && lines[i + 1].trim() && ADORN.test(lines[i + 2]) && lines[i + 2].trim()[0] === line.trim()[0]) {
      out[i] = '';
      out[i + 1] = `${'#'.repeat(level('over' + line.trim()[0]))} ${inline(lines[i + 1].trim())}`;
      out[i + 2] = '';
      i += 3;
      continue;
    }
    // Underlined title: Title, ====
    if (line.trim() && !/^\s/.test(line) && i + 1 < lines.length && ADORN.test(lines[i + 1]) && lines[i + 1].trim().length >= line.trim().length && !ADORN.test(line)) {
      out[i] = `${'#'.repeat(level(lines[i + 1].trim()[0]))} ${inline(line.trim())}`;
      out[i + 1] = '';
      i += 2;
      continue;
    }
    const d = DIRECTIVE.exec(line);
    const literal = !d && /::\s*$/.test(line) && !/^\s*\.\./.test(line);
    if (d || literal) {
      const base = indentOf(line);
      const name = d ? d[2].toLowerCase() : '';
      const isCode = literal || name === 'code-block' || name === 'code' || name === 'sourcecode' || name === 'ipython' || name === 'doctest';
      // The directive's body: following lines indented deeper than the directive (or blank).
      let j = i + 1;
      let end = i;
      while (j < lines.length && (lines[j].trim() === '' || indentOf(lines[j]) > base)) {
        if (lines[j].trim() !== '') end = j;
        j++;
      }
      if (isCode && end > i) {
        const lang = d ? (d[3].trim() || (name === 'doctest' ? 'pycon' : '')) : '';
        let first = i + 1;
        while (first <= end && (lines[first].trim() === '' || /^\s*:[\w-]+:/.test(lines[first]))) first++;
        const body = lines.slice(first, end + 1);
        const cut = Math.min(...body.filter((l) => l.trim()).map(indentOf));
        if (literal) {
          out[i] = inline(line.replace(/::\s*$/, /\s::\s*$/.test(line) || line.trim() === '::' ? '' : ':'));
          // The blank line after `text::` carries the opening fence when there is one.
          if (first > i + 1) out[i + 1] = '```';
          else out[i] = `${out[i]}\n\`\`\``;
        } else {
          out[i] = '```' + lang;
          for (let k = i + 1; k < first; k++) out[k] = '';
        }
        for (let k = first; k <= end; k++) out[k] = lines[k].slice(Math.min(cut, indentOf(lines[k])));
        // Close on the blank line after the block, or after its last line.
        if (end + 1 < lines.length && lines[end + 1].trim() === '') {
          out[end + 1] = '```';
          i = end + 2;
        } else {
          out[end] = `${out[end]}\n\`\`\``;
          i = end + 1;
        }
        continue;
      }
      if (d && ADMONITIONS.has(name)) {
        out[i] = `**${name[0].toUpperCase()}${name.slice(1)}:** ${inline(d[3])}`.trimEnd();
        for (let k = i + 1; k <= end; k++) out[k] = inline(lines[k].trim());
        i = end + 1;
        continue;
      }
      if (d) {
        // Other directives (toctree, image, automodule...) and their options carry no prose.
        for (let k = i; k <= end; k++) out[k] = '';
        i = end + 1;
        continue;
      }
    }
    if (/^\s*\.\.(\s|$)/.test(line)) {
      // A comment or a link target.
      out[i] = '';
      i++;
      continue;
    }
    out[i] = inline(line);
    i++;
  }
  return out.join('\n');
}
