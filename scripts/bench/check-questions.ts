/**
 * Mechanical check of a benchmark questions file against the corpora (issue 22): every question
 * names a corpus of the manifest with its library ID, ids are unique, and every gold section's
 * path exists in the corpus folder, its heading breadcrumb is a section of that page, and its line
 * span is exactly that section's extent computed from the page's markdown headings
 * (scripts/bench/sections.ts). It never looks at any ranking.
 *
 *   npm run bench:check -- FILE.jsonl [--corpora DIR]
 *
 * Prints one line per problem (with the span the page gives, where one can be found) and exits 1
 * when there is any.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readCorpora, readQuestions, type CorpusInfo } from './inputs.ts';
import type { BenchQuestion } from './metrics.ts';
import { pageSections, type PageSection } from './sections.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface QuestionProblem {
  id: string;
  /** Index of the gold entry, when the problem is one gold section's. */
  gold?: number;
  message: string;
}

const sameHeading = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((h, i) => h === b[i]);

/** Every problem of the questions against the corpora; empty when all is in order. */
export function checkQuestions(questions: readonly BenchQuestion[], corpora: readonly CorpusInfo[]): QuestionProblem[] {
  const problems: QuestionProblem[] = [];
  const byName = new Map(corpora.map((c) => [c.name, c]));
  const pages = new Map<string, PageSection[]>();
  const sectionsOf = (file: string): PageSection[] => {
    let s = pages.get(file);
    if (!s) pages.set(file, (s = pageSections(readFileSync(file, 'utf8'), file.endsWith('.mdx') ? 'mdx' : 'markdown')));
    return s;
  };
  const seen = new Set<string>();
  for (const q of questions) {
    if (seen.has(q.id)) problems.push({ id: q.id, message: 'the id is used by an earlier question' });
    seen.add(q.id);
    const corpus = byName.get(q.corpus);
    if (!corpus) {
      problems.push({ id: q.id, message: `corpus "${q.corpus}" is not in the manifest` });
      continue;
    }
    if (corpus.libraryId !== q.library) problems.push({ id: q.id, message: `library ${q.library} is not corpus ${q.corpus}'s (${corpus.libraryId})` });
    q.gold.forEach((g, i) => {
      const add = (message: string) => problems.push({ id: q.id, gold: i, message: `gold[${i}] ${g.path}: ${message}` });
      const file = resolve(corpus.dir, g.path);
      if (!file.startsWith(resolve(corpus.dir) + sep)) return add('the path leaves the corpus folder');
      if (!existsSync(file) || !statSync(file).isFile()) return add('no such file in the corpus');
      if (g.grade !== 1 && g.grade !== 2) add(`grade ${g.grade} is neither 1 nor 2`);
      if (!g.lines) return; // page-level gold: the file is all there is to check
      const sections = sectionsOf(file);
      if (!g.heading) {
        const at = sections.find((s) => s.lines[0] === g.lines![0] && s.lines[1] === g.lines![1]);
        if (!at) add(`lines ${g.lines.join('-')} are not the span of any section of the page`);
        return;
      }
      const named = sections.filter((s) => sameHeading(s.heading, g.heading!));
      if (named.length === 0) {
        const starting = sections.find((s) => s.lines[0] === g.lines![0]);
        return add(`no section "${g.heading.join(' > ')}"` + (starting ? ` (the section at line ${g.lines[0]} is "${starting.heading.join(' > ')}")` : ''));
      }
      if (!named.some((s) => s.lines[0] === g.lines![0] && s.lines[1] === g.lines![1])) {
        add(`lines ${g.lines.join('-')} should be ${named.map((s) => s.lines.join('-')).join(' or ')} for "${g.heading.join(' > ')}"`);
      }
    });
  }
  return problems;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { corpora: { type: 'string', default: join(ROOT, '..', 'shared', 'corpora') } },
  });
  if (positionals.length === 0) throw new Error('Give the questions: npm run bench:check -- FILE.jsonl');
  const corpora = readCorpora(resolve(values.corpora!));
  let bad = 0;
  for (const f of positionals) {
    const questions = readQuestions(resolve(f));
    const problems = checkQuestions(questions, corpora);
    for (const p of problems) console.log(`${f}: ${p.id}: ${p.message}`);
    console.log(`${f}: ${questions.length} questions, ${questions.reduce((n, q) => n + q.gold.length, 0)} gold sections, ${problems.length} problems`);
    bad += problems.length;
  }
  if (bad > 0) process.exitCode = 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e: Error) => {
    console.error(e.message);
    process.exit(2);
  });
}
