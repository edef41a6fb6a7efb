/**
 * Jupyter notebooks (.ipynb) to Markdown: markdown cells as they are, code cells as fenced code
 * in the kernel's language, separated by blank lines; outputs are left out. Line numbers of the
 * snippets refer to this converted text (a notebook file is JSON, whose lines mean little).
 */

interface Cell {
  cell_type?: unknown;
  source?: unknown;
}

function cellText(source: unknown): string {
  if (typeof source === 'string') return source;
  if (Array.isArray(source)) return source.filter((s) => typeof s === 'string').join('');
  return '';
}

/** The Markdown of a notebook, or null when the text is not a notebook. */
export function notebookToMarkdown(text: string): string | null {
  let nb: { cells?: unknown; metadata?: { kernelspec?: { language?: unknown }; language_info?: { name?: unknown } } };
  try {
    nb = JSON.parse(text);
  } catch {
    return null;
  }
  if (!nb || typeof nb !== 'object' || !Array.isArray(nb.cells)) return null;
  const lang = String(nb.metadata?.language_info?.name ?? nb.metadata?.kernelspec?.language ?? 'python').toLowerCase();
  const parts: string[] = [];
  for (const cell of nb.cells as Cell[]) {
    const body = cellText(cell?.source).replace(/\r\n?/g, '\n').replace(/\n+$/, '');
    if (body.trim() === '') continue;
    if (cell.cell_type === 'markdown') parts.push(body);
    else if (cell.cell_type === 'code') {
      const ticks = body.includes('```') ? '~~~~' : '```';
      parts.push(`${ticks}${lang}\n${body}\n${ticks}`);
    }
  }
  return parts.join('\n\n') + '\n';
}
