/** Reading the benchmark's inputs: the questions file and the corpora manifest, checked. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchQuestion, GoldSection } from './metrics.ts';

export interface CorpusInfo {
  name: string;
  libraryId: string;
  /** Folder of the corpus, absolute. */
  dir: string;
  bytes: number;
}

/** Parses a questions file (JSON lines); throws an Error naming the line of any bad entry. */
export function parseQuestions(text: string, file = 'questions'): BenchQuestion[] {
  const out: BenchQuestion[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const where = `${file}:${i + 1}`;
    let q: Partial<BenchQuestion>;
    try {
      q = JSON.parse(line) as Partial<BenchQuestion>;
    } catch (e) {
      throw new Error(`${where}: not valid JSON (${(e as Error).message}).`);
    }
    for (const k of ['id', 'library', 'corpus', 'question', 'type'] as const) {
      if (typeof q[k] !== 'string' || !q[k]) throw new Error(`${where}: "${k}" must be a non-empty string.`);
    }
    if (!Array.isArray(q.gold)) throw new Error(`${where}: "gold" must be an array (empty for type "none").`);
    q.gold.forEach((g: Partial<GoldSection>, j) => {
      if (typeof g.path !== 'string' || !g.path) throw new Error(`${where}: gold[${j}].path must be a path relative to the corpus folder.`);
      if (g.lines !== undefined && !(Array.isArray(g.lines) && g.lines.length === 2 && g.lines.every(Number.isInteger) && g.lines[0] <= g.lines[1])) {
        throw new Error(`${where}: gold[${j}].lines must be [first, last] line numbers.`);
      }
      if (typeof g.grade !== 'number') throw new Error(`${where}: gold[${j}].grade must be 1 or 2.`);
    });
    if (q.type !== 'none' && q.gold.length === 0) throw new Error(`${where}: a question of type "${q.type}" needs gold sections.`);
    out.push(q as BenchQuestion);
  });
  if (out.length === 0) throw new Error(`${file}: no questions.`);
  return out;
}

export function readQuestions(file: string): BenchQuestion[] {
  if (!existsSync(file)) throw new Error(`Questions file ${file} does not exist (give --questions FILE.jsonl).`);
  return parseQuestions(readFileSync(file, 'utf8'), file);
}

/** The corpora of a corpora folder, from its MANIFEST.json. */
export function readCorpora(dir: string): CorpusInfo[] {
  const manifest = join(dir, 'MANIFEST.json');
  if (!existsSync(manifest)) throw new Error(`${manifest} does not exist (give --corpora DIR, the folder holding MANIFEST.json).`);
  const m = JSON.parse(readFileSync(manifest, 'utf8')) as { corpora?: Array<{ name: string; libraryId: string; bytes?: number }> };
  if (!Array.isArray(m.corpora) || m.corpora.length === 0) throw new Error(`${manifest} lists no corpora.`);
  return m.corpora.map((c) => {
    if (!c.name || !c.libraryId) throw new Error(`${manifest}: every corpus needs a name and a libraryId.`);
    return { name: c.name, libraryId: c.libraryId, dir: join(dir, c.name), bytes: c.bytes ?? 0 };
  });
}
