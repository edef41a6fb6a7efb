/**
 * Verbatim phrases of a question: the text a developer pastes between quotes or backticks (an
 * error message, a log line, a call) and error messages written without quotes
 * (`TypeError: Body is unusable`). Documentation that holds such a phrase word for word (a
 * troubleshooting heading naming the error, the migration note quoting it) is very likely what
 * the question is about, more than its words taken one by one say.
 */

/** Quoted spans: "...", “...”, `...`, and '...' opened and closed at word boundaries (not "don't"). */
const QUOTED = /"([^"\n]+)"|“([^”\n]+)”|`([^`\n]+)`|(?<![\w'])'([^'\n]+?)'(?![\w])/g;

/** An error message without quotes: `SomeError: text` to the end of its clause. */
const ERROR_MESSAGE = /\b[A-Z]?[A-Za-z]*(?:Error|Exception):\s+[^"“`\n.;?!]+/g;

/**
 * The raw texts of a question's verbatim phrases, in the order they appear (duplicates and error
 * messages already inside a quoted phrase removed). A phrase is at least `minWords` words
 * separated by spaces: a lone name between backticks (`currentUser`) is a code name, which the
 * index already matches as a term, not a phrase.
 */
export function questionPhrases(question: string, minWords = 1): string[] {
  const quoted: string[] = [];
  for (const m of question.matchAll(QUOTED)) {
    const text = (m[1] ?? m[2] ?? m[3] ?? m[4] ?? '').trim();
    if (text) quoted.push(text);
  }
  const errors: string[] = [];
  for (const m of question.matchAll(ERROR_MESSAGE)) {
    const text = m[0].trim().replace(/['’]+$/, '');
    if (!quoted.some((q) => q.includes(text))) errors.push(text);
  }
  return [...new Set([...quoted, ...errors])].filter((p) => p.split(/\s+/).length >= minWords);
}

/**
 * Finds the longest run of consecutive tokens of one phrase that also appears, consecutive and
 * in the same order, in a text (the longest common substring over tokens). Prepared once per
 * phrase; each text costs time linear in its length, and only its tokens that occur in the
 * phrase cost more than a lookup.
 */
export class PhraseMatcher<T = string> {
  readonly length: number;
  /** Each token of the phrase -> its positions, in descending order. */
  private readonly at = new Map<T, number[]>();
  /** endAt[j]: the text position where the last run ending at phrase[j] ended; len[j]: its length. */
  private readonly endAt: Int32Array;
  private readonly len: Int32Array;

  constructor(phrase: ArrayLike<T>) {
    this.length = phrase.length;
    // Descending, so a repeated token reads its predecessor's state from the previous position.
    for (let j = phrase.length - 1; j >= 0; j--) {
      const list = this.at.get(phrase[j]);
      if (list) list.push(j);
      else this.at.set(phrase[j], [j]);
    }
    this.endAt = new Int32Array(phrase.length);
    this.len = new Int32Array(phrase.length);
  }

  longestRun(text: ArrayLike<T>): number {
    const n = this.length;
    if (n === 0 || text.length === 0) return 0;
    const { at, endAt, len } = this;
    endAt.fill(-2);
    let best = 0;
    for (let i = 0; i < text.length; i++) {
      const list = at.get(text[i]);
      if (!list) continue;
      for (const j of list) {
        const v = j > 0 && endAt[j - 1] === i - 1 ? len[j - 1] + 1 : 1;
        endAt[j] = i;
        len[j] = v;
        if (v > best) best = v;
      }
      if (best === n) break;
    }
    return best;
  }
}
