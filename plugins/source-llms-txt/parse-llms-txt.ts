/**
 * The llms.txt format (https://llmstxt.org): in order, an H1 with the project name (the only
 * required part), a blockquote summary, any markdown that is not a heading (details), then H2
 * sections, each a list of links `- [name](url): notes`. A section named "Optional" holds links
 * that can be skipped when a shorter context is needed.
 *
 * The parser is forgiving: a line it cannot place (a malformed link, a relative URL it cannot
 * resolve, text inside a link section) is reported in `skipped` with its line number and why,
 * and parsing goes on.
 */

export interface LlmsLink {
  title: string;
  /** Absolute URL (relative links are resolved against the llms.txt URL). */
  url: string;
  /** The notes after the link (may be ''). */
  description: string;
  /** The H2 section the link is listed under. */
  section: string;
  /** True in the "Optional" section. */
  optional: boolean;
  /** 1-based line number in the llms.txt file. */
  line: number;
}

export interface LlmsSection {
  name: string;
  optional: boolean;
  links: LlmsLink[];
}

export interface SkippedLine {
  line: number;
  text: string;
  reason: string;
}

export interface LlmsTxt {
  /** The H1, or '' when the file has none (the format requires one; we still read the links). */
  title: string;
  /** The blockquote summary (its lines joined by spaces), or ''. */
  summary: string;
  /** Markdown between the summary and the first H2. */
  details: string;
  /** Links listed before the first H2 (some files do this); section ''. */
  sections: LlmsSection[];
  skipped: SkippedLine[];
}

const H1 = /^#\s+(.+?)\s*#*\s*$/;
const H2 = /^##\s+(.+?)\s*#*\s*$/;
const HEADING = /^#{1,6}\s/;
const LIST_ITEM = /^\s*[-*+]\s+(.*)$/;
/** `[title](url)` with an optional `: notes` (or ` - notes`) after it. */
const LINK_ITEM = /^\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)\s*(?:[:\-–—]\s*(.*))?$/;

/** True for a section name the format treats as optional. */
export function isOptionalSection(name: string): boolean {
  return name.trim().toLowerCase() === 'optional';
}

/** Parses an llms.txt file; `baseUrl` resolves relative links. */
export function parseLlmsTxt(text: string, baseUrl: string): LlmsTxt {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const out: LlmsTxt = { title: '', summary: '', details: '', sections: [], skipped: [] };
  const summary: string[] = [];
  const details: string[] = [];
  let section: LlmsSection | null = null;
  let phase: 'start' | 'summary' | 'details' | 'sections' = 'start';
  let inFence = false;

  const skip = (i: number, reason: string) => out.skipped.push({ line: i + 1, text: lines[i].slice(0, 200), reason });
  const preamble = (): LlmsSection => {
    if (out.sections[0]?.name !== '') {
      out.sections.unshift({ name: '', optional: false, links: [] });
    }
    return out.sections[0];
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const trimmed = line.trim();
    if (/^(```|~~~)/.test(trimmed)) inFence = !inFence;

    if (!inFence) {
      const h1 = H1.exec(line);
      if (h1 && !line.startsWith('##')) {
        if (out.title === '' && phase === 'start') {
          out.title = h1[1];
          phase = 'summary';
        } else {
          skip(i, 'a second H1; an llms.txt file has one title');
        }
        continue;
      }
      const h2 = H2.exec(line);
      if (h2 && !line.startsWith('###')) {
        section = { name: h2[1], optional: isOptionalSection(h2[1]), links: [] };
        out.sections.push(section);
        phase = 'sections';
        continue;
      }
    }

    if (phase === 'start' || phase === 'summary') {
      if (trimmed === '') continue;
      if (!inFence && trimmed.startsWith('>')) {
        if (phase === 'start') phase = 'summary';
        summary.push(trimmed.replace(/^>\s?/, ''));
        continue;
      }
      phase = 'details';
    }

    if (phase === 'details') {
      // Some files list links before any H2: read them as an unnamed section, keep other text.
      const item = inFence ? null : LIST_ITEM.exec(line);
      if (item && item[1].startsWith('[')) {
        const link = parseLink(item[1], baseUrl, '', false, i + 1);
        if ('error' in link) skip(i, link.error);
        else preamble().links.push(link);
        continue;
      }
      details.push(line);
      continue;
    }

    // Inside an H2 section: only list items with a link belong here.
    if (trimmed === '' || inFence || /^(```|~~~)/.test(trimmed)) continue;
    const item = LIST_ITEM.exec(line);
    if (!item) {
      skip(i, HEADING.test(trimmed) ? 'a heading below H2 inside a link section' : 'not a list item; a section holds a list of links');
      continue;
    }
    const link = parseLink(item[1].trim(), baseUrl, section!.name, section!.optional, i + 1);
    if ('error' in link) skip(i, link.error);
    else section!.links.push(link);
  }

  out.summary = summary.join(' ').replace(/\s+/g, ' ').trim();
  out.details = details.join('\n').trim();
  out.sections = out.sections.filter((s) => s.links.length > 0 || s.name !== '');
  return out;
}

function parseLink(item: string, baseUrl: string, section: string, optional: boolean, line: number): LlmsLink | { error: string } {
  const m = LINK_ITEM.exec(item);
  if (!m) return { error: 'not a markdown link item "- [name](url): notes"' };
  const title = m[1].trim();
  let url: URL;
  try {
    url = new URL(m[2], baseUrl);
  } catch {
    return { error: `the link URL "${m[2].slice(0, 100)}" is not valid` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { error: `the link is not an http(s) URL (${url.protocol.replace(':', '')})` };
  }
  url.hash = '';
  return { title: title || url.pathname, url: url.href, description: (m[3] ?? '').trim(), section, optional, line };
}

/** Every link of the file in order, each URL once (the first listing wins). */
export function allLinks(doc: LlmsTxt): LlmsLink[] {
  const seen = new Set<string>();
  const out: LlmsLink[] = [];
  for (const s of doc.sections) {
    for (const l of s.links) {
      if (seen.has(l.url)) continue;
      seen.add(l.url);
      out.push(l);
    }
  }
  return out;
}
