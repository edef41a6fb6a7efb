/**
 * Library IDs, following Context7's API spec: "`/owner/repo` for GitHub repositories, or
 * `/<source>/<id>` for other sources (websites, llms.txt, ...). Optionally suffix with
 * `/<version>` or `@<version>` to pin a specific version." (pattern `^/[^/]+/[^/]+([/@][^/]+)?$`).
 *
 * Accepted shapes (each optionally followed by `/<version>` or `@<version>`; both forms parse to
 * the same LibraryId, and formatLibraryId always writes the `@` form):
 *   /owner/repo            kind 'repo'   (any first segment that is not a reserved prefix)
 *   /group/sub/project     kind 'repo' with more segments: GitLab subgroups (up to 21 segments;
 *                          core/git-url.ts derives these IDs from repository URLs)
 *   /websites/<name>       /llmstxt/<source>   /packages/<name>   /pypi/<name>   /docs/<name>
 *   /openapi/<name>        /confluence/<name>
 *   /npm/<name>            /npm/@scope/pkg  (scoped: see below)
 *
 * Decisions where the spec is silent:
 * - Parsing is strict and never decodes or normalises anything: no trimming, no percent-decoding,
 *   no Unicode normalisation. Anything that is not printable ASCII is refused, which rules out
 *   look-alikes (fullwidth solidus U+FF0F, division slash U+2215, fraction slash U+2044,
 *   Cyrillic letters), zero-width characters and bidi overrides in one go.
 * - Whitespace is refused anywhere, including at the ends (callers trim if they want to).
 * - A trailing slash (`/a/b/`, `/a/b@1/`) is REJECTED rather than stripped: the spec's pattern
 *   does not allow it, and one spelling per ID keeps IDs usable as keys. The message says to
 *   remove it.
 * - Scoped npm: right after `/npm/`, a segment starting with '@' is the scope, and the package
 *   name is the next segment: `/npm/@scope/pkg` has name '@scope/pkg'. Versions are pinned as
 *   `/npm/@scope/pkg@1.2.3` or `/npm/@scope/pkg/1.2.3`. `/npm/@scope` alone is an error. Scopes
 *   are only recognised under /npm/; a leading '@' anywhere else is an error.
 * - Repo IDs of more than two segments: `/a/b/c` reads by default as `/a/b` at version `c` (the
 *   spec's slash form), and `/a/b/c@v` as `/a/b/c` at version `v`. Which library a client's
 *   `/a/b/c` names is decided with the store (core/library-resolve.ts: the whole path when that
 *   library exists); `parseLibraryId(x, { wholePath: true })` reads every segment as the path,
 *   for IDs that name a library (derived, added, renamed). Versions of such libraries are best
 *   pinned with '@', which is never ambiguous.
 * - Outside a scope, '@' may appear once, after the name, to introduce the version. Using both
 *   `@v` and `/v` (`/a/b@1/2`) is an error, as is an empty version (`/a/b@`).
 * - Segment charset: ASCII letters, digits, '.', '_', '-'; versions may also contain '+'
 *   (semver build metadata). No segment (owner, name, scope, version) may be empty, be '.' or
 *   '..', or start with '.' (so GitHub's `/owner/.github` is not addressable; acceptable).
 * - Length: the whole input may be at most 500 characters (UTF-16 code units); each component
 *   (owner/prefix, scope, name, version) at most 100. The limit applies to the version on its own,
 *   not to `name@version` together, so `/a/b@v` and `/a/b/v` are accepted or refused alike.
 * - Case: prefixes are matched case-insensitively and canonicalised to lower case
 *   (`/NPM/React` -> id '/npm/React'); everything else keeps the case it was given.
 * - An owner literally named like a reserved prefix (a GitHub user "docs", "npm", ...) cannot be
 *   addressed as a repo; the prefix wins.
 * - Error messages show at most 80 characters of the input (a part quoted again in the reason at
 *   most 24), with control, format (zero-width, bidi) and separator characters replaced by U+FFFD;
 *   offending characters are named by code point. They say what is wrong and what is expected.
 * - slugifyLibraryName may return '' when nothing usable is left (e.g. '!!!'); callers should run
 *   validateLibraryName on the result, which refuses ''. Any non-empty result passes it.
 */
import { RefdeskError } from './errors.ts';

export type LibraryIdKind = 'repo' | 'websites' | 'llmstxt' | 'packages' | 'npm' | 'pypi' | 'docs' | 'openapi' | 'confluence';

export interface LibraryId {
  /** canonical ID without version, e.g. '/owner/repo', '/docs/koa', '/npm/@scope/pkg' */
  id: string;
  kind: LibraryIdKind;
  /** first segment: owner for repos, otherwise the prefix (websites, llmstxt, packages, npm, pypi, docs) */
  namespace: string;
  /** second segment (for scoped npm: '@scope/pkg') */
  name: string;
  /** '' when not pinned */
  version: string;
}

/** Maximum length of the whole input, in UTF-16 code units. */
export const LIBRARY_ID_MAX_LENGTH = 500;
/** Most segments of a repo ID (owner included): GitLab nests subgroups up to 20 deep. */
export const LIBRARY_ID_REPO_MAX_SEGMENTS = 21;
/** Maximum length of one component (owner/prefix, scope, name, version). */
export const LIBRARY_ID_SEGMENT_MAX_LENGTH = 100;

export const RESERVED_PREFIXES: readonly string[] = Object.freeze([
  'websites',
  'llmstxt',
  'packages',
  'npm',
  'pypi',
  'docs',
  'openapi',
  'confluence',
]);

const EXPECTED =
  'Expected /owner/repo or /<source>/<name>, optionally followed by /<version> or @<version>.';
const SHOW_MAX = 80;
/** A part of the input quoted again inside the reason is cut shorter, so the echo stays small. */
const SHOW_PART_MAX = 24;

const NAME_CHAR = /^[A-Za-z0-9._-]$/;
const VERSION_CHAR = /^[A-Za-z0-9._+-]$/;
// C0 controls, DEL, C1 controls.
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/;
const NON_ASCII_RE = /[^\u0000-\u007f]/;
const HIDDEN_RE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;

const CHAR_NAMES: Record<number, string> = {
  0x00: 'NUL',
  0x09: 'tab',
  0x0a: 'line feed',
  0x0d: 'carriage return',
  0x1b: 'escape',
  0x7f: 'DEL',
  0xa0: 'no-break space',
  0x200b: 'zero-width space',
  0x200c: 'zero-width non-joiner',
  0x200d: 'zero-width joiner',
  0x202e: 'right-to-left override',
  0x2044: "fraction slash, a look-alike of '/'",
  0x2215: "division slash, a look-alike of '/'",
  0x29f8: "big solidus, a look-alike of '/'",
  0xff0f: "fullwidth solidus, a look-alike of '/'",
  0xfe68: "small reverse solidus, a look-alike of '\\'",
  0xff3c: "fullwidth reverse solidus, a look-alike of '\\'",
  0xfeff: 'byte order mark',
};

/** The input as shown in messages: at most 80 characters, invisible/control characters replaced. */
function show(input: string, max = SHOW_MAX): string {
  const chars = Array.from(input);
  let s = chars.slice(0, max).join('').replace(HIDDEN_RE, '\uFFFD');
  if (chars.length > max) s += '...';
  return s;
}

function codePoint(ch: string): string {
  return 'U+' + ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
}

/** `'x'` for printable ASCII, otherwise `U+XXXX (name)`. */
function describeChar(ch: string): string {
  const cp = ch.codePointAt(0)!;
  if (cp > 0x20 && cp < 0x7f) return `'${ch}'`;
  const name = CHAR_NAMES[cp];
  return name ? `${codePoint(ch)} (${name})` : codePoint(ch);
}

function fail(input: string, reason: string): never {
  throw new RefdeskError('invalid_library_id', `Invalid library ID "${show(input)}": ${reason}. ${EXPECTED}`);
}

/** Position (1-based, in code points) and the character of the first match of `re`. */
function firstMatch(input: string, re: RegExp): { pos: number; ch: string } | null {
  let pos = 0;
  for (const ch of input) {
    pos++;
    if (re.test(ch)) return { pos, ch };
  }
  return null;
}

const GITHUB_URL_RE =
  /^(?:(?:https?|git|ssh):\/\/)?(?:[^@/]+@)?(?:www\.)?github\.com[/:]([A-Za-z0-9_-][A-Za-z0-9._-]*)\/([A-Za-z0-9_-][A-Za-z0-9._-]*?)(?:\.git)?(?:[/?#].*)?$/i;
const SCHEME_RE = /^[A-Za-z][A-Za-z0-9+.-]*:/;

function checkUrl(input: string): void {
  const gh = GITHUB_URL_RE.exec(input);
  if (gh) {
    fail(input, `this is a URL, not a library ID; for a GitHub repository use "/${gh[1]}/${gh[2]}"`);
  }
  if (SCHEME_RE.test(input) || /^www\./i.test(input)) {
    fail(
      input,
      'this is a URL, not a library ID; library IDs are paths like "/owner/repo", and websites are addressed as "/websites/<name>"',
    );
  }
}

type Role = 'owner' | 'prefix' | 'name' | 'scope' | 'version';

function checkComponent(input: string, value: string, role: Role): void {
  const label = role === 'owner' ? 'owner' : role;
  if (value === '') fail(input, `the ${label} is empty`);
  if (value.length > LIBRARY_ID_SEGMENT_MAX_LENGTH) {
    fail(
      input,
      `the ${label} is ${value.length} characters long; each part may be at most ${LIBRARY_ID_SEGMENT_MAX_LENGTH}`,
    );
  }
  if (value === '.' || value === '..') fail(input, `'${value}' segments are not allowed`);
  if (value.startsWith('.')) fail(input, `the ${label} "${show(value, SHOW_PART_MAX)}" starts with '.', which is not allowed`);
  if (value.includes('@')) {
    if (role === 'version') fail(input, `the version "${show(value, SHOW_PART_MAX)}" contains '@'; use a single '@' before the version`);
    fail(
      input,
      `'@' may only appear once, between the name and the version at the end (scoped packages are written /npm/@scope/pkg)`,
    );
  }
  const allowed = role === 'version' ? VERSION_CHAR : NAME_CHAR;
  for (const ch of value) {
    if (!allowed.test(ch)) {
      const what =
        role === 'version'
          ? "ASCII letters, digits, '.', '_', '-' and '+'"
          : "ASCII letters, digits, '.', '_' and '-'";
      fail(input, `the ${label} "${show(value, SHOW_PART_MAX)}" contains ${describeChar(ch)}; it may contain only ${what}`);
    }
  }
}

export interface ParseLibraryIdOptions {
  /**
   * Read every segment of a repo ID as the path (`/group/sub/project` is that library, not
   * `/group/sub` at version `project`); a version is then pinned with '@' only. For IDs that
   * name a library (derived from a git URL, given to add or rename), never for what a client
   * asks for: resolve those with libraryIdReadings and the store.
   */
  wholePath?: boolean;
}

export function parseLibraryId(input: string, options: ParseLibraryIdOptions = {}): LibraryId {
  if (typeof input !== 'string') {
    throw new RefdeskError(
      'invalid_library_id',
      `Invalid library ID: expected a string, got ${input === null ? 'null' : typeof input}. ${EXPECTED}`,
    );
  }
  if (input === '') fail(input, 'it is empty');
  if (input.length > LIBRARY_ID_MAX_LENGTH) {
    fail(input, `it is ${input.length} characters long; the limit is ${LIBRARY_ID_MAX_LENGTH}`);
  }
  const ctl = firstMatch(input, CONTROL_RE);
  if (ctl) fail(input, `it contains the control character ${describeChar(ctl.ch)} at position ${ctl.pos}`);
  const na = firstMatch(input, NON_ASCII_RE);
  if (na) {
    fail(
      input,
      `it contains the non-ASCII character ${describeChar(na.ch)} at position ${na.pos}; only ASCII is allowed (look-alike and invisible characters are refused)`,
    );
  }
  // From here on the input is printable ASCII (0x20-0x7e).
  checkUrl(input);
  const ws = firstMatch(input, /\s/);
  if (ws) fail(input, `it contains whitespace at position ${ws.pos}`);
  if (input.includes('\\')) fail(input, "it contains a backslash; segments are separated by '/'");
  if (input.includes('%')) {
    fail(input, "it contains '%'; percent-encoding is not decoded, write the characters themselves");
  }
  if (input.includes('?')) fail(input, "it contains '?'; query strings are not part of a library ID");
  if (input.includes('#')) fail(input, "it contains '#'; fragments are not part of a library ID");
  if (!input.startsWith('/')) {
    const suggestion = tryParseLibraryId('/' + input);
    fail(
      input,
      suggestion
        ? `it must start with '/' (did you mean "${formatLibraryId(suggestion.id, suggestion.version)}"?)`
        : "it must start with '/'",
    );
  }

  const segs = input.slice(1).split('/');
  for (const s of segs) {
    if (s === '..' || s === '.' || s.startsWith('..@') || s.startsWith('.@')) {
      fail(input, `'${s.split('@')[0]}' segments are not allowed (no path traversal)`);
    }
  }
  if (segs.length === 1 && segs[0] === '') fail(input, "it is just '/'");
  if (segs.length > 1 && segs[segs.length - 1] === '' && segs.slice(0, -1).every((s) => s !== '')) {
    fail(input, "it ends with '/'; remove the trailing slash");
  }
  if (segs.some((s) => s === '')) fail(input, "it contains an empty segment ('//')");

  const first = segs[0];
  const lowerFirst = first.toLowerCase();
  const kind: LibraryIdKind = RESERVED_PREFIXES.includes(lowerFirst) ? (lowerFirst as LibraryIdKind) : 'repo';
  const scoped = kind === 'npm' && segs.length > 1 && segs[1].startsWith('@');
  const lastSeg = segs[segs.length - 1];
  // Repo IDs may have more than two segments (GitLab subgroups: /group/sub/project). A version
  // is pinned with '@' on the last segment, or (slash form) as the last of three or more segments
  // unless the caller asked for the whole path as the ID.
  const repoNameSegs =
    lastSeg.includes('@') || segs.length === 2 || options.wholePath ? segs.length - 1 : segs.length - 2;
  const nameSegCount = kind === 'repo' ? Math.max(1, repoNameSegs) : scoped ? 2 : 1;

  if (segs.length < 2) {
    fail(
      input,
      kind === 'repo'
        ? `it has only one segment; a GitHub repository is "/owner/repo"`
        : `it has only the prefix "${lowerFirst}"; add a name: "/${lowerFirst}/<name>"`,
    );
  }
  if (scoped && segs.length < 3) {
    fail(input, `a scoped npm package needs a package name: "/npm/@${segs[1].split('@')[1]}/<package>"`);
  }
  const maxSegs = kind === 'repo' ? LIBRARY_ID_REPO_MAX_SEGMENTS + 1 : 1 + nameSegCount + 1;
  if (segs.length > maxSegs) {
    fail(
      input,
      `it has ${segs.length} segments; at most ${maxSegs} are allowed (${scoped ? 'npm, @scope, package, version' : kind === 'repo' ? `a repository path of up to ${LIBRARY_ID_REPO_MAX_SEGMENTS} segments, version` : 'prefix, name, version'})`,
    );
  }

  if (kind === 'repo') {
    if (first.startsWith('@')) {
      fail(input, "scoped packages ('@scope/pkg') are only supported as /npm/@scope/pkg");
    }
    checkComponent(input, first, 'owner');
  }

  const nameParts = segs.slice(1, 1 + nameSegCount);
  if (scoped) {
    const scope = nameParts[0].slice(1);
    if (scope === '') fail(input, "the npm scope is empty ('@' must be followed by the scope name)");
    checkComponent(input, scope, 'scope');
  }
  for (const part of nameParts.slice(scoped ? 1 : 0, -1)) {
    if (part.includes('@')) fail(input, "it pins the version twice; use either /<version> or @<version>, not both");
    checkComponent(input, part, 'name');
  }
  let last = nameParts[nameParts.length - 1];
  let atVersion: string | undefined;
  const at = last.indexOf('@');
  if (at >= 0) {
    atVersion = last.slice(at + 1);
    last = last.slice(0, at);
    if (last === '') {
      fail(input, "the name before '@' is empty ('@' introduces a version; scoped packages are written /npm/@scope/pkg)");
    }
  }
  checkComponent(input, last, 'name');
  nameParts[nameParts.length - 1] = last;

  const slashVersion: string | undefined = segs[1 + nameSegCount];
  if (atVersion !== undefined && slashVersion !== undefined) {
    fail(input, "it pins the version twice; use either /<version> or @<version>, not both");
  }
  if (atVersion === '') fail(input, "the version after '@' is empty");
  const version = atVersion ?? slashVersion ?? '';
  if (version !== '') checkComponent(input, version, 'version');

  const namespace = kind === 'repo' ? first : kind;
  const name = nameParts.join('/');
  return { id: `/${namespace}/${name}`, kind, namespace, name, version };
}

export function tryParseLibraryId(input: string, options: ParseLibraryIdOptions = {}): LibraryId | null {
  try {
    return parseLibraryId(input, options);
  } catch (e) {
    if (e instanceof RefdeskError) return null;
    throw e;
  }
}

/**
 * The ways an ID can be read, the whole path first: `/group/sub/project` is either the library
 * `/group/sub/project` or `/group/sub` at version `project`. One reading for every ID without a
 * slash version (or not a repo ID). Throws like parseLibraryId when no reading is valid.
 */
export function libraryIdReadings(input: string): LibraryId[] {
  const usual = parseLibraryId(input);
  if (usual.kind !== 'repo' || usual.version === '' || input.endsWith(`@${usual.version}`)) return [usual];
  const whole = tryParseLibraryId(input, { wholePath: true });
  return whole ? [whole, usual] : [usual];
}

/** '/a/b' + ('@' + version when a version is given). Does not validate; parse the result if needed. */
export function formatLibraryId(id: string, version?: string): string {
  return version ? `${id}@${version}` : id;
}

/**
 * Validates a user-chosen name for the `<name>` part of /docs/<name> etc.
 * 1-100 ASCII letters, digits, '.', '_', '-', starting with a letter or digit.
 */
export function validateLibraryName(name: string): void {
  const bad = (reason: string): never => {
    const shown = typeof name === 'string' ? show(name) : String(name);
    throw new RefdeskError(
      'invalid_request',
      `Invalid library name "${shown}": ${reason}. Use 1-${LIBRARY_ID_SEGMENT_MAX_LENGTH} ASCII letters, digits, '.', '_' or '-', starting with a letter or digit.`,
    );
  };
  if (typeof name !== 'string') bad('it must be a string');
  if (name === '') bad('it is empty');
  if (name.length > LIBRARY_ID_SEGMENT_MAX_LENGTH) {
    bad(`it is ${name.length} characters long; the limit is ${LIBRARY_ID_SEGMENT_MAX_LENGTH}`);
  }
  if (name === '.' || name === '..') bad(`'${name}' is not allowed`);
  for (const ch of name) {
    if (!NAME_CHAR.test(ch)) bad(`it contains ${describeChar(ch)}`);
  }
  if (!/^[A-Za-z0-9]/.test(name)) bad('it must start with a letter or digit');
}

/**
 * Best-effort slug for a library name: 'My Docs!' -> 'my-docs', 'Café Guide' -> 'cafe-guide',
 * 'Next.js' -> 'next.js'. Returns '' when nothing usable remains; any non-empty result passes
 * validateLibraryName.
 */
export function slugifyLibraryName(text: string): string {
  return String(text)
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/([._-])[._-]+/g, '$1')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, LIBRARY_ID_SEGMENT_MAX_LENGTH)
    .replace(/[^a-z0-9]+$/, '');
}
