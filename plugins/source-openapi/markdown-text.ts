/**
 * Markdown from a spec (descriptions, summaries) made safe to embed in the generated documents:
 * it must not open sections or code blocks of its own, so that every operation stays one
 * section with exactly one code block (the example request).
 */

/** Block markdown: headings become bold lines, fenced code becomes a quoted block, setext underlines go. */
export function embedMarkdown(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of lines) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      out.push(`> ${line}`);
      if (marker && marker[1][0] === fence[0] && marker[1].length >= fence.length && line.trim() === marker[1]) fence = null;
      continue;
    }
    if (marker) {
      fence = marker[1];
      if (out.length > 0 && out[out.length - 1] !== '') out.push('');
      out.push(`> ${line}`);
      continue;
    }
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      out.push(heading[1] ? `**${heading[1]}**` : '');
      continue;
    }
    if (/^\s{0,3}(=+|-+)\s*$/.test(line) && out.length > 0 && out[out.length - 1].trim() !== '') {
      out.push('');
      continue;
    }
    // Deep indentation would read as an indented code block: keep at most three spaces.
    out.push(line.replace(/^(?:\t| {4,})+/, (m) => (m.length >= 4 ? '   ' : m)));
  }
  if (fence) out.push('> ' + fence);
  return out.join('\n').replace(/\n{3,}/g, '\n\n').trim();
}

/** One line of inline markdown (for list items and headings): whitespace collapsed, at most `max` characters. */
export function inlineText(text: string, max = 240): string {
  const flat = text.replace(/```[\s\S]*?```/g, ' ').replace(/\s+/g, ' ').replace(/^#+\s*/, '').trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max);
  const sentence = cut.lastIndexOf('. ');
  if (sentence > max * 0.5) return cut.slice(0, sentence + 1);
  const space = cut.lastIndexOf(' ');
  return (space > max * 0.5 ? cut.slice(0, space) : cut).replace(/[\s`*_]+$/, '') + '…';
}

/** Inline code that survives backticks inside it. */
export function code(text: string): string {
  const t = text.replace(/\s+/g, ' ');
  const longest = Math.max(0, ...(t.match(/`+/g) ?? []).map((m) => m.length));
  const ticks = '`'.repeat(longest + 1);
  return longest > 0 ? `${ticks} ${t} ${ticks}` : `${ticks}${t}${ticks}`;
}
