import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

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
