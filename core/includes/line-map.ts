/**
 * Line maps: how the lines of a document's `content` relate to the lines of the file as written
 * when a source changed the text (include directives expanded, a format converted). Entry i is
 * the 1-based line of the original file that line i + 1 of the content comes from; lines an
 * include brought in map to the line of the directive. A map never decreases.
 */

/** The original line of a content line (1-based); lines past the map take its last entry. */
export function originalLine(lineMap: readonly number[], line: number): number {
  if (lineMap.length === 0) return line;
  const k = Math.min(Math.max(line, 1), lineMap.length);
  return lineMap[k - 1];
}

/**
 * Joins per-original-line output (entry i stands for line i + 1 of the original and may hold
 * several lines, or be followed by extra entries past the original's end) into the content and
 * its line map. `originalLines` is how many lines the original has.
 */
export function joinWithLineMap(perLine: readonly string[], originalLines: number): { content: string; lineMap: number[] } {
  const lineMap: number[] = [];
  const last = Math.max(1, originalLines);
  perLine.forEach((entry, i) => {
    const at = Math.min(i + 1, last);
    let n = 1;
    for (let k = entry.indexOf('\n'); k >= 0; k = entry.indexOf('\n', k + 1)) n++;
    for (let j = 0; j < n; j++) lineMap.push(at);
  });
  return { content: perLine.join('\n'), lineMap };
}

/** True when the map sends every content line to itself (the source need not send it). */
export function isIdentityMap(lineMap: readonly number[]): boolean {
  for (let i = 0; i < lineMap.length; i++) if (lineMap[i] !== i + 1) return false;
  return true;
}

/** What is wrong with a document's line map against its content (none when it is valid). */
export function lineMapProblems(lineMap: unknown, content: string): string[] {
  if (!Array.isArray(lineMap)) return ['lineMap must be an array of line numbers'];
  const lines = content.split('\n').length;
  const problems: string[] = [];
  if (lineMap.length !== lines) problems.push(`lineMap has ${lineMap.length} entries for ${lines} lines of content`);
  let prev = 1;
  for (let i = 0; i < lineMap.length; i++) {
    const v = lineMap[i];
    if (!Number.isInteger(v) || v < 1) {
      problems.push(`lineMap[${i}] is not a positive integer`);
      break;
    }
    if (v < prev) {
      problems.push(`lineMap decreases at entry ${i} (${prev} then ${v})`);
      break;
    }
    prev = v;
  }
  return problems;
}

/**
 * Makes snippets cite the original file: each line range, counted in the lines of a document's
 * content, becomes the range of the file's lines they came from (in place). The Chunker contract.
 */
export function citeOriginalLines(snippets: Array<{ lineStart: number; lineEnd: number }>, lineMap: readonly number[]): void {
  for (const s of snippets) {
    s.lineStart = originalLine(lineMap, s.lineStart);
    s.lineEnd = Math.max(s.lineStart, originalLine(lineMap, s.lineEnd));
  }
}
