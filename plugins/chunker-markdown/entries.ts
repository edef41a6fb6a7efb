/**
 * API reference entries (issue 22): the signature line that opens one entry of a reference page
 * (`subprocess.check_output(args, *, stdin=None, ...)` followed by its description), as the
 * sources yield them:
 *
 * - a paragraph that is only an inline code signature (Python's library reference as devdocs
 *   text: `` `awaitable asyncio.gather(*aws, return_exceptions=False)` ``), decorators too
 *   (`` `@functools.lru_cache(maxsize=128)` ``, named without the @);
 * - a paragraph whose text is only a signature, however marked up: Sphinx and mkdocstrings HTML
 *   (`<dt>` with its name, parameters and permalink) as the website source converts it,
 *   `subprocess.check\_output(_args_, _\*_, ...)[¶](#subprocess.check_output)`; TypeDoc's
 *   `▸ **createStore**<T>(init): Store<T>`; a bold or code name with its parameters;
 * - the signature lines of rustdoc, javadoc and Go doc (`pub fn spawn<F>(future: F) -> JoinHandle`,
 *   `public static String valueOf(int i)`, `func (c *Ctx) Accepts(offers ...string) string`).
 *
 * Each entry becomes a section of its own under the page's headings (the chunker's breadcrumb
 * keeps them), titled with its qualified name, and a code snippet holding its signature with its
 * first sentences as description.
 */
import type { RootContent } from 'mdast';
import { toString } from 'mdast-util-to-string';

export interface EntrySignature {
  /** The signature as written (one line per source line). */
  signature: string;
  /** The entry's name as the signature gives it (`subprocess.check_output`, `Ctx.Accepts`). */
  name: string;
  /** Declares a type whose members may follow with unqualified names (class, interface...). */
  declaresType: boolean;
}

/** Words that may stand before a signature's name: kinds of entries and modifiers. */
const PREFIX =
  /^(?:(?:async|await|awaitable|coroutine|class|exception|function|method|classmethod|staticmethod|abstractmethod|attribute|data|property|def|fn|func|pub(?:\([\w:]+\))?|public|protected|private|static|final|abstract|synchronized|native|default|const|unsafe|extern|export|declare|interface|struct|trait|enum|type|impl|readonly|var|let|new|▸)\s+)+/;

/** Entry kinds that declare a type whose members may follow. */
const TYPE_KINDS = /(?:^|\s)(?:class|exception|interface|struct|trait|enum)\s/;

/** A qualified name: `a.b.c`, `a::b`, `A#b`. */
const QUALIFIED = String.raw`[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*`;

/**
 * A signature's head: (after a modifier only: a Go receiver or a Java/C# return type), the
 * qualified name, optional generics and one parameter list; `tail` is what follows it.
 */
const callPattern = (lead: string) =>
  new RegExp(String.raw`^${lead}(${QUALIFIED})\s*(?:<[^()]*>)?\s*\((?:[^()]|\([^()]*\))*\)(?<tail>.*)$`);
const CALL = callPattern('');
const TYPED_CALL = callPattern(String.raw`(?:\([^()]*\)\s+|[\w$.<>\[\],?]+\s+)?`);

/**
 * What may follow the parameters: nothing, a return annotation (`-> T`, `: T`, `=> T`), or
 * (after a modifier: Go, Java) a bare return type. Never a sentence: no full stop before a blank
 * or at the end, at most a few words.
 */
function typeTail(tail: string, typed: boolean): boolean {
  const t = tail.trim();
  if (!t) return true;
  if (/[.!?;](?:\s|$)/.test(t) || t.split(/\s+/).length > 8) return false;
  if (/^(?:->|:|=>)\s*\S/.test(t)) return true;
  return typed && /^[\w$.<>\[\]*,() ]{1,80}$/.test(t) && t.split(/\s+/).length <= 6;
}

/** A name alone after an entry kind (`exception copy.Error`, `attribute Popen.returncode`): dotted. */
const BARE = new RegExp(String.raw`^(${QUALIFIED})$`);

/**
 * The signature an entry paragraph opens with, when the paragraph is nothing but a signature;
 * null for anything else (prose mentioning a call, a command line, a sentence).
 */
export function entrySignature(node: RootContent): EntrySignature | null {
  if (node.type !== 'paragraph' || node.children.length === 0) return null;
  const onlyCode = node.children.length === 1 && node.children[0].type === 'inlineCode';
  // Sphinx's permalink (¶), rendered as a link after the signature, is not part of it.
  const text = toString(node, { includeHtml: false })
    .replace(/\s*[¶#§]\s*$/, '')
    .trim();
  if (text.length < 3 || text.length > 600) return null;
  return parseSignature(text, onlyCode);
}

/**
 * The parts of a signature line. A name alone counts only in inline code: dotted
 * (`subprocess.PIPE`) or after an entry kind (`exception Error`).
 */
export function parseSignature(text: string, inlineCode: boolean): EntrySignature | null {
  const flat = text.replace(/\s+/g, ' ').trim();
  // A decorator's entry (Sphinx py:decorator: `@functools.lru_cache(maxsize=128)`) is named
  // without its @; the @ counts as its kind, so a lone `@classmethod` is an entry too.
  const decorator = /^@[A-Za-z_$]/.test(flat);
  if (decorator) {
    const call = flat.slice(1).match(CALL);
    if (call && typeTail(call.groups!.tail, false)) return { signature: text.trim(), name: call[1], declaresType: false };
    const bare = inlineCode ? flat.slice(1).match(BARE) : null;
    return bare ? { signature: text.trim(), name: bare[1], declaresType: false } : null;
  }
  const prefix = flat.match(PREFIX)?.[0] ?? '';
  const rest = flat.slice(prefix.length);
  const declaresType = TYPE_KINDS.test(` ${prefix}`);
  const call = rest.match(prefix ? TYPED_CALL : CALL);
  if (call && typeTail(call.groups!.tail, prefix !== '')) return { signature: text.trim(), name: goMethod(rest) ?? call[1], declaresType };
  if (!inlineCode) return null;
  const bare = rest.match(BARE);
  if (bare && (prefix || /[.:#]/.test(bare[1]))) return { signature: text.trim(), name: bare[1], declaresType };
  return null;
}

/** A Go method's name with its receiver's type: `(c *fiber.Ctx) Accepts(...)` -> `Ctx.Accepts`. */
function goMethod(rest: string): string | undefined {
  const m = rest.match(/^\(\s*\w+\s+\*?([\w.]+)\)\s+(\w+)\s*\(/);
  return m ? `${m[1].split('.').pop()}.${m[2]}` : undefined;
}

/** The name an entry is known by: qualified with the type it follows when it has no qualifier. */
export function qualifiedName(name: string, owner: string | undefined): string {
  return owner && !/[.:#]/.test(name) ? `${owner}.${name}` : name;
}

/**
 * Whether a heading names the entry whose signature follows it: its last word (without
 * parentheses, a kind word or a qualifier) is the entry's name's last part (`valueOf`,
 * `Method valueOf`, `createStore()`, `func Get`, `tokio::spawn`).
 */
export function headingNames(heading: string | undefined, name: string): boolean {
  if (!heading) return false;
  const last = (s: string) => s.split(/\.|::|#/).pop()!.toLowerCase();
  const words = heading.replace(/\(.*?\)/g, ' ').trim().split(/\s+/);
  const word = words[words.length - 1] ?? '';
  return word !== '' && last(word) === last(name);
}
