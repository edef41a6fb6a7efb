import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, relative } from 'node:path';
import type { Snippet } from '../../core/contracts.ts';
import { MarkdownChunker } from '../../plugins/chunker-markdown/markdown-chunker.ts';

/** ../shared/corpora beside the checkout (frozen documentation used as test data). */
export const CORPORA_DIR = fileURLToPath(new URL('../../../shared/corpora', import.meta.url));
export const hasCorpora = existsSync(join(CORPORA_DIR, 'MANIFEST.json'));

export interface CorpusEntry {
  name: string;
  libraryId: string;
  docsPath: string;
  include: string[];
  files: number;
  bytes: number;
}

export function corpora(): CorpusEntry[] {
  return (JSON.parse(readFileSync(join(CORPORA_DIR, 'MANIFEST.json'), 'utf8')) as { corpora: CorpusEntry[] }).corpora;
}

export function corpusFile(corpus: string, path: string): string {
  return readFileSync(join(CORPORA_DIR, corpus, path), 'utf8');
}

/** The markdown files of a corpus chunked as an upload ingest would, in path order. */
export function chunkedCorpus(corpus: string): Snippet[] {
  const chunker = new MarkdownChunker({ maxInfoTokens: 400, maxDescriptionChars: 600 });
  const root = join(CORPORA_DIR, corpus);
  const out: Snippet[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.mdx?$/.test(name)) out.push(...chunker.chunk({ path: relative(root, p), format: name.endsWith('.mdx') ? 'mdx' : 'markdown', content: readFileSync(p, 'utf8') }));
    }
  };
  walk(root);
  return out;
}

/** The shared benchmark questions (../shared/bench/questions.jsonl), if they are there. */
export const SHARED_QUESTIONS = join(CORPORA_DIR, '..', 'bench', 'questions.jsonl');
export const hasSharedQuestions = hasCorpora && existsSync(SHARED_QUESTIONS);

/** The question texts of one corpus in the shared benchmark questions. */
export function sharedQuestions(corpus: string): string[] {
  return readFileSync(SHARED_QUESTIONS, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { corpus: string; question: string })
    .filter((q) => q.corpus === corpus)
    .map((q) => q.question);
}
