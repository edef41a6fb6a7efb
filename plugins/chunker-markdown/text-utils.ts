/** Small text helpers shared by the markdown chunker. */

/** Approximate token count (about four characters per token, as tokenizers of code average). */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}

/** GitHub-style heading slug. */
export function slugify(text: string): string {
  return text
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s+/g, '-');
}

/** Splits `Title { #anchor }` into its text and explicit anchor. */
export function splitHeadingId(text: string): { text: string; anchor?: string } {
  const m = text.match(/^(.*?)\s*\{\s*#([\w.-]+)\s*\}\s*$/);
  if (m) return { text: m[1].trim(), anchor: m[2] };
  return { text: text.trim() };
}

/** Markdown to readable plain text for descriptions: links keep their text, emphasis markers go. */
export function markdownToPlain(md: string): string {
  // Inline code keeps its text verbatim (`<path>` is not an HTML tag there).
  return md
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .split(/(`[^`\n]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : plainSegment(part)))
    .join('')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function plainSegment(md: string): string {
  return md
    .replace(/<\/?[A-Za-z][^>]*>/g, '')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(^|\W)[*_]([^*_\n]+)[*_](?=\W|$)/g, '$1$2')
    .replace(/^\s{0,3}>\s?/gm, '')
    .replace(/^\s*[-*+]\s+/gm, '- ')
    .replace(/([^\n])\n(?![ \t]*([-*+]|\d+[.)]|\n))/g, '$1 ');
}

/** Cuts text at a sentence or word boundary near `max` characters. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const sentence = cut.lastIndexOf('. ');
  if (sentence > max * 0.5) return cut.slice(0, sentence + 1);
  const space = cut.lastIndexOf(' ');
  return (space > max * 0.5 ? cut.slice(0, space) : cut).trimEnd() + '…';
}

/** The first sentence of a text, at most `max` characters. */
export function firstSentence(text: string, max = 100): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const m = flat.match(/^(.+?[.!?:])(\s|$)/);
  const s = m ? m[1] : flat;
  return truncate(s.replace(/:$/, ''), max);
}

/** The first `count` sentences of a text that fit in `max` characters (at least the first, cut to fit). */
export function firstSentences(text: string, max: number, count = 2): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const sentences = flat.match(/.+?(?:[.!?](?=\s|$)|$)\s*/g) ?? [flat];
  let out = '';
  for (const s of sentences.slice(0, count)) {
    if (out && (out + s).trim().length > max) break;
    out += s;
  }
  return truncate(out.trim(), max);
}

const LANGUAGE_ALIASES: Record<string, string> = {
  ts: 'typescript',
  tsx: 'tsx',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'jsx',
  py: 'python',
  python3: 'python',
  pycon: 'python',
  sh: 'bash',
  shell: 'bash',
  zsh: 'bash',
  console: 'bash',
  shellsession: 'bash',
  yml: 'yaml',
  rs: 'rust',
  golang: 'go',
  md: 'markdown',
  htm: 'html',
  'c++': 'cpp',
  text: 'text',
  txt: 'text',
  plaintext: 'text',
};

/**
 * The language of a fence from its info string: VitePress (`ts twoslash [file]`,
 * `ts:line-numbers {1,3}`), React (`js src/App.js active`), Hugo (`go-html-template {file=...}`).
 */
export function normalizeLanguage(lang: string | null | undefined, code: string): string {
  let l = (lang ?? '').trim().toLowerCase();
  l = l.replace(/[{[].*$/, '').replace(/:.*$/, '').trim();
  if (!l) return guessLanguage(code);
  return LANGUAGE_ALIASES[l] ?? l;
}

export function guessLanguage(code: string): string {
  if (/^\s*>>>\s/m.test(code)) return 'python';
  if (/^\s*\$\s+\w/m.test(code)) return 'bash';
  if (/^\s*(def |class \w+.*:\s*$|from \w+ import |import \w+\s*$)/m.test(code)) return 'python';
  if (/^\s*(const|let|var|function|import .* from|export )\b/m.test(code)) return 'javascript';
  if (/^\s*(package main|func \w+\(|import \()/m.test(code)) return 'go';
  if (/^\s*(fn |use \w+::|let mut )/m.test(code)) return 'rust';
  if (/^\s*[{[]/.test(code) && /[}\]]\s*$/.test(code)) return 'json';
  return 'text';
}
