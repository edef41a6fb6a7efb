/**
 * Generated documentation for `npm run bench:scale`: a seeded vocabulary of made-up words whose
 * frequencies follow a Zipf distribution (the word of rank r drawn with probability ~ 1/r, as in
 * real text: a few words everywhere, most words rare), and markdown pages built from it (headings,
 * prose paragraphs, fenced code blocks with identifiers from the same words). Deterministic for a
 * seed; nothing is read from disk or the network.
 */

/** mulberry32 (scripts/fuzz/requests.ts): a small seeded PRNG, uniform in [0, 1). */
export { prng as rng } from '../fuzz/requests.ts';
import { prng as rng } from '../fuzz/requests.ts';
import type { Snippet } from '../../core/contracts.ts';

const ONSETS = ['b', 'c', 'd', 'f', 'g', 'h', 'j', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'w', 'z', 'br', 'cl', 'dr', 'fl', 'gr', 'pl', 'pr', 'sk', 'sl', 'st', 'tr', 'ch', 'sh', 'th'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'io', 'ou'];
const CODAS = ['', '', 'n', 'r', 's', 'l', 'x', 'nd', 'st', 'rk', 'm', 't'];
const LANGUAGES = ['ts', 'js', 'python', 'bash', 'go', 'rust', 'json'];

export class Vocabulary {
  readonly words: string[];
  /** Cumulative Zipf weights over `words` (rank order). */
  private readonly cumulative: Float64Array;

  constructor(seed: number, size = 50_000, exponent = 1.05) {
    const random = rng(seed);
    const seen = new Set<string>();
    const words: string[] = [];
    while (words.length < size) {
      const syllables = 1 + Math.floor(random() * 3.2);
      let w = '';
      for (let s = 0; s < syllables; s++) w += pick(random, ONSETS) + pick(random, VOWELS) + (s === syllables - 1 ? pick(random, CODAS) : '');
      if (w.length < 3 || seen.has(w)) continue;
      seen.add(w);
      words.push(w);
    }
    this.words = words;
    this.cumulative = new Float64Array(size);
    let sum = 0;
    for (let r = 0; r < size; r++) this.cumulative[r] = sum += 1 / Math.pow(r + 1, exponent);
  }

  /** One word, drawn by its Zipf weight. */
  word(random: () => number): string {
    const x = random() * this.cumulative[this.cumulative.length - 1];
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo];
  }

  sentence(random: () => number, words: number): string {
    const out: string[] = [];
    for (let i = 0; i < words; i++) out.push(this.word(random));
    const s = out.join(' ');
    return s.charAt(0).toUpperCase() + s.slice(1) + '.';
  }

  /** A question of `words` words as a user would type it. */
  question(random: () => number, words: number): string {
    const out: string[] = [];
    for (let i = 0; i < words; i++) out.push(this.word(random));
    return `how do I ${out.join(' ')}`;
  }

  /** A library name: one or two words (the i-th name is stable for a seed). */
  libraryName(random: () => number, i: number): string {
    const a = this.words[(i * 7919) % this.words.length];
    return random() < 0.4 ? `${a}-${this.word(random)}` : a;
  }

  title(name: string): string {
    return name
      .split('-')
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join(' ');
  }
}

function pick<T>(random: () => number, xs: readonly T[]): T {
  return xs[Math.floor(random() * xs.length)];
}

/** One markdown page: a title, then `sections` sections (some of them subsections), prose and code. */
export function generatePage(vocab: Vocabulary, random: () => number, sections: number): string {
  const lines: string[] = [`# ${vocab.title(vocab.word(random))} ${vocab.word(random)}`, '', vocab.sentence(random, 14), ''];
  for (let s = 0; s < sections; s++) {
    const level = s > 0 && random() < 0.35 ? '###' : '##';
    lines.push(`${level} ${vocab.title(vocab.word(random))} ${vocab.word(random)} ${vocab.word(random)}`, '');
    const paragraphs = 1 + Math.floor(random() * 2);
    for (let p = 0; p < paragraphs; p++) {
      const sentences = 2 + Math.floor(random() * 4);
      lines.push(Array.from({ length: sentences }, () => vocab.sentence(random, 6 + Math.floor(random() * 12))).join(' '), '');
    }
    if (random() < 0.3) {
      const fn = `${vocab.word(random)}${vocab.title(vocab.word(random)).replace(/ /g, '')}`;
      const arg = vocab.word(random);
      lines.push(`\`\`\`${pick(random, LANGUAGES)}`, `const ${arg} = ${fn}({ ${vocab.word(random)}: true });`, `${arg}.${vocab.word(random)}('${vocab.word(random)}');`, '```', '');
    }
  }
  return lines.join('\n');
}

/** A generated snippet: what the chunker gives (every field set). */
export type GeneratedSnippet = Snippet & { anchor: string };

const anchorOf = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-');
const tokensOf = (s: string) => Math.ceil(s.length / 4);

/**
 * The snippets the markdown chunker makes of a page like generatePage's, generated directly (the
 * fast path of `npm run bench:scale`: chunking a million generated snippets took 45 min at load
 * 30, and the chunker's speed is not what that bench measures). The same shapes: a page's intro
 * under its title, one info snippet a section (a `###` section under its `##` parent in the
 * breadcrumb), and for about 30% of sections a code snippet with the section's first sentence as
 * its description. Prose, headings and code come from the same vocabulary and distribution.
 */
export function generatePageSnippets(vocab: Vocabulary, random: () => number, path: string, sections: number): GeneratedSnippet[] {
  const pageTitle = `${vocab.title(vocab.word(random))} ${vocab.word(random)}`;
  const base = { description: '', language: '', code: '', pageTitle, sourcePath: path };
  const intro = vocab.sentence(random, 14);
  const out: GeneratedSnippet[] = [{ ...base, type: 'info', title: pageTitle, content: intro, breadcrumb: [pageTitle], anchor: anchorOf(pageTitle), lineStart: 1, lineEnd: 4, tokens: tokensOf(intro) }];
  let line = 5;
  let parent = '';
  for (let s = 0; s < sections; s++) {
    const sub = s > 0 && random() < 0.35;
    const title = `${vocab.title(vocab.word(random))} ${vocab.word(random)} ${vocab.word(random)}`;
    if (!sub) parent = title;
    const breadcrumb = sub && parent ? [pageTitle, parent, title] : [pageTitle, title];
    const paragraphs = 1 + Math.floor(random() * 2);
    const text: string[] = [];
    for (let p = 0; p < paragraphs; p++) {
      const sentences = 2 + Math.floor(random() * 4);
      text.push(Array.from({ length: sentences }, () => vocab.sentence(random, 6 + Math.floor(random() * 12))).join(' '));
    }
    const content = text.join('\n\n');
    const lines = 2 + 2 * paragraphs;
    out.push({ ...base, type: 'info', title, content, breadcrumb, anchor: anchorOf(title), lineStart: line, lineEnd: line + lines - 1, tokens: tokensOf(title + content) });
    line += lines;
    if (random() < 0.3) {
      const fn = `${vocab.word(random)}${vocab.title(vocab.word(random)).replace(/ /g, '')}`;
      const arg = vocab.word(random);
      const code = `const ${arg} = ${fn}({ ${vocab.word(random)}: true });\n${arg}.${vocab.word(random)}('${vocab.word(random)}');`;
      const description = content.slice(0, content.indexOf('.') + 1);
      out.push({ ...base, type: 'code', title, description, language: pick(random, LANGUAGES), code, content: '', breadcrumb, anchor: anchorOf(title), lineStart: line, lineEnd: line + 3, tokens: tokensOf(code + description) });
      line += 5;
    }
  }
  return out;
}
