/**
 * Notion blocks to markdown: rich text with its annotations and links, headings, lists (nested
 * through their children), to-dos, quotes, callouts, code with its language, dividers and
 * toggles. Block types this does not know (images, embeds, databases...) are left out.
 */

/** One run of Notion rich text (the fields this reads). */
export interface RichText {
  plain_text: string;
  href?: string | null;
  annotations?: { bold?: boolean; italic?: boolean; strikethrough?: boolean; code?: boolean };
}

/** One Notion block (the fields this reads); `children` are filled in by the source. */
export interface NotionBlock {
  id: string;
  type: string;
  has_children?: boolean;
  children?: NotionBlock[];
  [type: string]: unknown;
}

/** Rich text as inline markdown. */
export function richTextToMarkdown(runs: readonly RichText[] | undefined): string {
  return (runs ?? [])
    .map((r) => {
      let text = r.plain_text;
      if (!text) return '';
      const a = r.annotations ?? {};
      if (a.code) text = '`' + text.replace(/`/g, '\u02cb') + '`';
      if (a.bold) text = `**${text}**`;
      if (a.italic) text = `*${text}*`;
      if (a.strikethrough) text = `~~${text}~~`;
      if (r.href) text = `[${text}](${r.href})`;
      return text;
    })
    .join('');
}

/** The plain text of rich text (titles). */
export const plainText = (runs: readonly RichText[] | undefined): string => (runs ?? []).map((r) => r.plain_text).join('');

const richOf = (block: NotionBlock): RichText[] | undefined => (block[block.type] as { rich_text?: RichText[] } | undefined)?.rich_text;

/** Blocks as markdown lines, `indent` spaces deep (list children). */
export function blocksToMarkdown(blocks: readonly NotionBlock[], indent = ''): string {
  const out: string[] = [];
  let number = 0;
  for (const block of blocks) {
    number = block.type === 'numbered_list_item' ? number + 1 : 0;
    const text = richTextToMarkdown(richOf(block));
    const children = block.children?.length ? blocksToMarkdown(block.children, indent + '  ') : '';
    const data = (block[block.type] ?? {}) as Record<string, unknown>;
    switch (block.type) {
      case 'heading_1':
      case 'heading_2':
      case 'heading_3':
        // The page title is the document's H1: Notion's headings start one level below it.
        out.push(`${'#'.repeat(Number(block.type.slice(-1)) + 1)} ${text}`, '');
        break;
      case 'paragraph':
        if (text) out.push(indent + text, '');
        if (children) out.push(children);
        break;
      case 'bulleted_list_item':
        out.push(`${indent}- ${text}`);
        if (children) out.push(children);
        break;
      case 'numbered_list_item':
        out.push(`${indent}${number}. ${text}`);
        if (children) out.push(children);
        break;
      case 'to_do':
        out.push(`${indent}- [${data.checked ? 'x' : ' '}] ${text}`);
        if (children) out.push(children);
        break;
      case 'quote':
      case 'callout':
        out.push(`${indent}> ${text}`, '');
        break;
      case 'code': {
        const language = typeof data.language === 'string' && data.language !== 'plain text' ? data.language : '';
        out.push('```' + language, plainText(richOf(block)), '```', '');
        break;
      }
      case 'divider':
        out.push('---', '');
        break;
      case 'toggle':
        out.push(`${indent}${text}`, '');
        if (children) out.push(children);
        break;
      default:
        break;
    }
    // A list ends with a blank line before what follows it.
    if (/list_item|to_do/.test(block.type) && !/list_item|to_do/.test(blocks[blocks.indexOf(block) + 1]?.type ?? '')) out.push('');
  }
  return out.join('\n').replace(/\n{3,}/g, '\n\n');
}
