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
