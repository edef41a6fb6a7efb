import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RefdeskError } from '../../core/errors.ts';
import {
  LIBRARY_ID_MAX_LENGTH,
  RESERVED_PREFIXES,
  formatLibraryId,
  libraryIdReadings,
  parseLibraryId,
  slugifyLibraryName,
  tryParseLibraryId,
  validateLibraryName,
  type LibraryId,
} from '../../core/library-id.ts';

function lib(id: string, kind: LibraryId['kind'], namespace: string, name: string, version = ''): LibraryId {
  return { id, kind, namespace, name, version };
}

const VALID: { input: string; expected: LibraryId }[] = [
  // the spec's own examples
  { input: '/vercel/next.js', expected: lib('/vercel/next.js', 'repo', 'vercel', 'next.js') },
  { input: '/websites/uploadcare', expected: lib('/websites/uploadcare', 'websites', 'websites', 'uploadcare') },
  { input: '/llmstxt/example', expected: lib('/llmstxt/example', 'llmstxt', 'llmstxt', 'example') },
  { input: '/vercel/next.js/v14.3.0', expected: lib('/vercel/next.js', 'repo', 'vercel', 'next.js', 'v14.3.0') },
  { input: '/vercel/next.js@v14.3.0', expected: lib('/vercel/next.js', 'repo', 'vercel', 'next.js', 'v14.3.0') },
  // repos
  { input: '/facebook/react', expected: lib('/facebook/react', 'repo', 'facebook', 'react') },
  { input: '/python/cpython-docs', expected: lib('/python/cpython-docs', 'repo', 'python', 'cpython-docs') },
  { input: '/my_org/my_repo', expected: lib('/my_org/my_repo', 'repo', 'my_org', 'my_repo') },
  { input: '/a/b', expected: lib('/a/b', 'repo', 'a', 'b') },
  { input: '/0/1', expected: lib('/0/1', 'repo', '0', '1') },
  { input: '/Vercel/Next.js', expected: lib('/Vercel/Next.js', 'repo', 'Vercel', 'Next.js') },
  { input: '/koajs/koa@3.0.0', expected: lib('/koajs/koa', 'repo', 'koajs', 'koa', '3.0.0') },
  { input: '/koajs/koa/main', expected: lib('/koajs/koa', 'repo', 'koajs', 'koa', 'main') },
  {
    input: '/a/b@1.2.3-beta.1+build.5',
    expected: lib('/a/b', 'repo', 'a', 'b', '1.2.3-beta.1+build.5'),
  },
  { input: '/a/b/1.0.0+sha.abc', expected: lib('/a/b', 'repo', 'a', 'b', '1.0.0+sha.abc') },
  { input: '/a/b.c.d', expected: lib('/a/b.c.d', 'repo', 'a', 'b.c.d') },
  { input: '/a/b..c', expected: lib('/a/b..c', 'repo', 'a', 'b..c') },
  { input: `/${'o'.repeat(100)}/${'r'.repeat(100)}@${'1'.repeat(100)}`, expected: lib(`/${'o'.repeat(100)}/${'r'.repeat(100)}`, 'repo', 'o'.repeat(100), 'r'.repeat(100), '1'.repeat(100)) },
  // repo IDs with more segments (GitLab subgroups): '@' pins; a slash version is the last segment
  { input: '/group/sub/project@v1.2', expected: lib('/group/sub/project', 'repo', 'group', 'sub/project', 'v1.2') },
  { input: '/a/b/c/d', expected: lib('/a/b/c', 'repo', 'a', 'b/c', 'd') },
  { input: '/g/s1/s2/p@2.0.0', expected: lib('/g/s1/s2/p', 'repo', 'g', 's1/s2/p', '2.0.0') },
  // reserved prefixes
  { input: '/websites/react.dev', expected: lib('/websites/react.dev', 'websites', 'websites', 'react.dev') },
  { input: '/packages/lodash', expected: lib('/packages/lodash', 'packages', 'packages', 'lodash') },
  { input: '/pypi/requests@2.31.0', expected: lib('/pypi/requests', 'pypi', 'pypi', 'requests', '2.31.0') },
  { input: '/docs/koa', expected: lib('/docs/koa', 'docs', 'docs', 'koa') },
  { input: '/docs/koa/2.x', expected: lib('/docs/koa', 'docs', 'docs', 'koa', '2.x') },
  { input: '/npm/react', expected: lib('/npm/react', 'npm', 'npm', 'react') },
  { input: '/npm/react@18.2.0', expected: lib('/npm/react', 'npm', 'npm', 'react', '18.2.0') },
  { input: '/npm/react/18.2.0', expected: lib('/npm/react', 'npm', 'npm', 'react', '18.2.0') },
  // prefixes are case-insensitive and canonicalised; names keep their case
  { input: '/NPM/React', expected: lib('/npm/React', 'npm', 'npm', 'React') },
  { input: '/Websites/Uploadcare', expected: lib('/websites/Uploadcare', 'websites', 'websites', 'Uploadcare') },
  { input: '/LLMSTXT/Example@V2', expected: lib('/llmstxt/Example', 'llmstxt', 'llmstxt', 'Example', 'V2') },
  // scoped npm
  { input: '/npm/@types/node', expected: lib('/npm/@types/node', 'npm', 'npm', '@types/node') },
  { input: '/npm/@scope/pkg@1.2.3', expected: lib('/npm/@scope/pkg', 'npm', 'npm', '@scope/pkg', '1.2.3') },
  { input: '/npm/@scope/pkg/1.2.3', expected: lib('/npm/@scope/pkg', 'npm', 'npm', '@scope/pkg', '1.2.3') },
  { input: '/npm/@koa/router@15.0.0-rc.1', expected: lib('/npm/@koa/router', 'npm', 'npm', '@koa/router', '15.0.0-rc.1') },
  { input: '/Npm/@Scope/Pkg', expected: lib('/npm/@Scope/Pkg', 'npm', 'npm', '@Scope/Pkg') },
];

const INVALID: { input: string; errorIncludes: string }[] = [
  // traversal
  { input: '/a/..', errorIncludes: "'..' segments are not allowed" },
  { input: '/../a', errorIncludes: "'..' segments are not allowed" },
  { input: '/a/../b', errorIncludes: "'..' segments are not allowed" },
  { input: '/a/b/..', errorIncludes: "'..' segments are not allowed" },
  { input: '/a/..@1', errorIncludes: "'..' segments are not allowed" },
  { input: '/a/b@..', errorIncludes: "'..' segments are not allowed" },
  { input: '/./b', errorIncludes: "'.' segments are not allowed" },
  { input: '/npm/@../pkg', errorIncludes: "'..' segments are not allowed" },
  { input: '/a/.hidden', errorIncludes: "starts with '.'" },
  { input: '/a/b@.1', errorIncludes: "starts with '.'" },
  // percent-encoding is never decoded
  { input: '/a/%2e%2e', errorIncludes: "contains '%'" },
  { input: '/a%2Fb/c', errorIncludes: "contains '%'" },
  { input: '/a/b%00', errorIncludes: "contains '%'" },
  { input: '/a/%252e', errorIncludes: 'percent-encoding is not decoded' },
  // control characters
  { input: '/a/b\u0000', errorIncludes: 'control character U+0000 (NUL) at position 5' },
  { input: '/a/\u0000/b', errorIncludes: 'U+0000 (NUL)' },
  { input: '/a/b\n', errorIncludes: 'control character U+000A (line feed)' },
  { input: '/a/b\r\n/c', errorIncludes: 'U+000D (carriage return)' },
  { input: '/a/\tb', errorIncludes: 'U+0009 (tab)' },
  { input: '/a/\u001b[31mb', errorIncludes: 'U+001B (escape)' },
  { input: '/a/b\u007f', errorIncludes: 'U+007F (DEL)' },
  { input: '/a/b\u0085', errorIncludes: 'control character U+0085' },
  // backslashes
  { input: '\\a\\b', errorIncludes: 'backslash' },
  { input: '/a\\..\\b/c', errorIncludes: 'backslash' },
  { input: '/a/b\\c', errorIncludes: 'backslash' },
  // over-long
  { input: '/a/' + 'b'.repeat(498), errorIncludes: 'is 501 characters long; the limit is 500' },
  { input: '/a/' + 'b'.repeat(101), errorIncludes: 'the name is 101 characters long' },
  { input: '/' + 'a'.repeat(101) + '/b', errorIncludes: 'the owner is 101 characters long' },
  { input: '/a/b@' + '1'.repeat(101), errorIncludes: 'the version is 101 characters long' },
  { input: '/npm/@' + 's'.repeat(101) + '/p', errorIncludes: 'the scope is 101 characters long' },
  // unicode look-alikes and invisible characters
  { input: '/a\uFF0Fb', errorIncludes: "U+FF0F (fullwidth solidus, a look-alike of '/')" },
  { input: '/a\u2215b', errorIncludes: 'U+2215 (division slash' },
  { input: '/a\u2044b', errorIncludes: 'U+2044 (fraction slash' },
  { input: '/re\u0430ct/react', errorIncludes: 'non-ASCII character U+0430 at position 4' },
  { input: '/a/b\u200dc', errorIncludes: 'U+200D (zero-width joiner)' },
  { input: '/a/b\u200b', errorIncludes: 'U+200B (zero-width space)' },
  { input: '/a/\u202Eb/c', errorIncludes: 'U+202E (right-to-left override)' },
  { input: '\uFEFF/a/b', errorIncludes: 'U+FEFF (byte order mark)' },
  { input: '/a/b\u00a0', errorIncludes: 'U+00A0 (no-break space)' },
  { input: '/ａ/b', errorIncludes: 'non-ASCII character U+FF41' },
  { input: '/a/caf\u00e9', errorIncludes: 'only ASCII is allowed' },
  { input: '/a/b\uD800', errorIncludes: 'non-ASCII character U+D800' },
  // whitespace
  { input: '/a/b c', errorIncludes: 'contains whitespace at position 5' },
  { input: ' /a/b', errorIncludes: 'contains whitespace at position 1' },
  { input: '/a/b ', errorIncludes: 'contains whitespace' },
  // shape
  { input: '', errorIncludes: 'it is empty' },
  { input: '/', errorIncludes: "it is just '/'" },
  { input: 'a/b', errorIncludes: `must start with '/' (did you mean "/a/b"?)` },
  { input: 'vercel/next.js@v14', errorIncludes: `did you mean "/vercel/next.js@v14"?` },
  { input: 'koa', errorIncludes: "it must start with '/'" },
  { input: '/koa', errorIncludes: 'only one segment' },
  { input: '/websites', errorIncludes: 'add a name: "/websites/<name>"' },
  { input: `/${Array.from({ length: 23 }, (_, i) => 's' + i).join('/')}`, errorIncludes: 'it has 23 segments; at most 22 are allowed' },
  { input: '/a/b@1/c/d', errorIncludes: 'pins the version twice' },
  { input: '/a/b/c@', errorIncludes: "the version after '@' is empty" },
  { input: '/a/b/.c/d', errorIncludes: "starts with '.'" },
  { input: '/npm/@s/p/1/x', errorIncludes: 'it has 5 segments; at most 4 are allowed' },
  { input: '/a/b/', errorIncludes: 'remove the trailing slash' },
  { input: '/a/b@1/', errorIncludes: 'remove the trailing slash' },
  { input: '//a/b', errorIncludes: "empty segment ('//')" },
  { input: '/a//b', errorIncludes: "empty segment ('//')" },
  { input: '/a/b//', errorIncludes: "empty segment ('//')" },
  // versions
  { input: '/a/b@1/2', errorIncludes: 'pins the version twice' },
  { input: '/npm/@s/p@1/2', errorIncludes: 'pins the version twice' },
  { input: '/a/b@', errorIncludes: "the version after '@' is empty" },
  { input: '/npm/@s/p@', errorIncludes: "the version after '@' is empty" },
  { input: '/a/b@1@2', errorIncludes: "the version \"1@2\" contains '@'" },
  { input: '/a/@1', errorIncludes: "the name before '@' is empty" },
  { input: '/a/b@1:2', errorIncludes: "contains ':'" },
  { input: '/a/b/1~2', errorIncludes: "the version \"1~2\" contains '~'" },
  // '@' and scopes
  { input: '/a@1/b', errorIncludes: "'@' may only appear once" },
  { input: '/@scope/pkg', errorIncludes: 'only supported as /npm/@scope/pkg' },
  { input: '/npm/@scope', errorIncludes: 'a scoped npm package needs a package name: "/npm/@scope/<package>"' },
  { input: '/npm/@scope@1', errorIncludes: 'needs a package name' },
  { input: '/npm/@/pkg', errorIncludes: 'the npm scope is empty' },
  { input: '/packages/@scope/pkg', errorIncludes: 'scoped packages are written /npm/@scope/pkg' },
  { input: '/a/@scope/pkg', errorIncludes: "the name before '@' is empty" },
  { input: '/npm/a/@scope', errorIncludes: "the version \"@scope\" contains '@'" },
  { input: '/npm/pkg/@1', errorIncludes: "the version \"@1\" contains '@'" },
  // query strings, fragments, other characters
  { input: '/a/b?version=1', errorIncludes: "contains '?'" },
  { input: '/a/b#readme', errorIncludes: "contains '#'" },
  { input: '/a/b;rm', errorIncludes: "contains ';'" },
  { input: '/a/b:c', errorIncludes: "contains ':'" },
  { input: '/a/<script>', errorIncludes: "contains '<'" },
  { input: '/a/"b"', errorIncludes: `contains '"'` },
  { input: '/a/b*', errorIncludes: "contains '*'" },
  { input: '/a+b/c', errorIncludes: "contains '+'" },
  // URL forms
  { input: 'https://github.com/vercel/next.js', errorIncludes: 'use "/vercel/next.js"' },
  { input: 'http://www.github.com/a/b.git', errorIncludes: 'use "/a/b"' },
  { input: 'https://github.com/a/b/tree/main/docs?x=1#y', errorIncludes: 'use "/a/b"' },
  { input: 'github.com/a/b', errorIncludes: 'use "/a/b"' },
  { input: 'git@github.com:a/b.git', errorIncludes: 'use "/a/b"' },
  { input: 'https://react.dev/learn', errorIncludes: '"/websites/<name>"' },
  { input: 'file:///etc/passwd', errorIncludes: 'this is a URL' },
  { input: 'javascript:alert(1)', errorIncludes: 'this is a URL' },
];

function isInvalidId(input: string, includes: string) {
  return (err: unknown): true => {
    assert.ok(err instanceof RefdeskError, `expected RefdeskError for ${JSON.stringify(input)}, got ${String(err)}`);
    assert.equal(err.code, 'invalid_library_id');
    assert.equal(err.status, 400);
    assert.ok(err.message.startsWith('Invalid library ID "'), err.message);
    assert.ok(err.message.includes(includes), `message for ${JSON.stringify(input)} lacks ${JSON.stringify(includes)}: ${err.message}`);
    assert.ok(err.message.includes('/owner/repo') && err.message.includes('/<source>/<name>'), err.message);
    assert.ok(err.message.includes('/<version>') && err.message.includes('@<version>'), err.message);
    // never echo control / invisible characters
    assert.doesNotMatch(err.message, /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/);
    assert.doesNotMatch(err.message, /[\uD800-\uDFFF]/);
    return true;
  };
}

test(`parses ${VALID.length} valid library IDs`, () => {
  assert.ok(VALID.length >= 25);
  for (const { input, expected } of VALID) {
    assert.deepEqual(parseLibraryId(input), expected, input);
    assert.deepEqual(tryParseLibraryId(input), expected, input);
    // everything but scoped npm and multi-segment (GitLab) repo IDs also fits the spec's pattern
    if (!expected.name.startsWith('@') && !expected.name.includes('/')) assert.match(input, /^\/[^/]+\/[^/]+([/@][^/]+)?$/, input);
  }
});

test(`rejects ${INVALID.length} invalid or hostile library IDs with a clear message`, () => {
  assert.ok(INVALID.length >= 35);
  for (const { input, errorIncludes } of INVALID) {
    assert.throws(() => parseLibraryId(input), isInvalidId(input, errorIncludes), JSON.stringify(input));
    assert.equal(tryParseLibraryId(input), null, JSON.stringify(input));
  }
});

test('/<version> and @<version> forms parse to the same LibraryId', () => {
  const pairs: [string, string][] = [
    ['/vercel/next.js/v14.3.0', '/vercel/next.js@v14.3.0'],
    ['/npm/@scope/pkg/1.2.3', '/npm/@scope/pkg@1.2.3'],
    ['/docs/koa/2.x', '/docs/koa@2.x'],
    ['/a/b/1.0.0+build.1', '/a/b@1.0.0+build.1'],
  ];
  for (const [slash, at] of pairs) assert.deepEqual(parseLibraryId(slash), parseLibraryId(at));
});

test('round trip: formatLibraryId(parse(x).id, parse(x).version) parses back to the same', () => {
  for (const { input } of VALID) {
    const p = parseLibraryId(input);
    const formatted = formatLibraryId(p.id, p.version);
    assert.deepEqual(parseLibraryId(formatted), p, `${input} -> ${formatted}`);
    // formatting is canonical: a second round trip is a fixed point
    const again = parseLibraryId(formatted);
    assert.equal(formatLibraryId(again.id, again.version), formatted);
    // the id alone is itself a valid, unpinned ID (read as a whole path: `/group/sub/project`)
    assert.deepEqual(parseLibraryId(p.id, { wholePath: true }), { ...p, version: '' });
  }
});

test('wholePath reads every segment of a repo ID as the path; libraryIdReadings lists both readings', () => {
  assert.deepEqual(parseLibraryId('/group/sub/project', { wholePath: true }), lib('/group/sub/project', 'repo', 'group', 'sub/project'));
  assert.deepEqual(parseLibraryId('/group/sub/project@v1', { wholePath: true }), lib('/group/sub/project', 'repo', 'group', 'sub/project', 'v1'));
  assert.deepEqual(parseLibraryId('/a/b', { wholePath: true }), lib('/a/b', 'repo', 'a', 'b'));
  // prefixes keep their fixed shape
  assert.deepEqual(parseLibraryId('/npm/react/18.2.0', { wholePath: true }), lib('/npm/react', 'npm', 'npm', 'react', '18.2.0'));
  assert.deepEqual(libraryIdReadings('/group/sub/project'), [lib('/group/sub/project', 'repo', 'group', 'sub/project'), lib('/group/sub', 'repo', 'group', 'sub', 'project')]);
  assert.deepEqual(libraryIdReadings('/a/b/c@1'), [lib('/a/b/c', 'repo', 'a', 'b/c', '1')]);
  assert.deepEqual(libraryIdReadings('/a/b'), [lib('/a/b', 'repo', 'a', 'b')]);
  assert.deepEqual(libraryIdReadings('/npm/ms/2.1.3'), [lib('/npm/ms', 'npm', 'npm', 'ms', '2.1.3')]);
});

test('formatLibraryId', () => {
  assert.equal(formatLibraryId('/a/b'), '/a/b');
  assert.equal(formatLibraryId('/a/b', ''), '/a/b');
  assert.equal(formatLibraryId('/a/b', '1.0'), '/a/b@1.0');
  assert.equal(formatLibraryId('/npm/@s/p', '2.0.0'), '/npm/@s/p@2.0.0');
});

test('messages show at most ~80 characters of the input', () => {
  const long = '/a/' + 'x'.repeat(600);
  assert.throws(
    () => parseLibraryId(long),
    (err: unknown) => {
      assert.ok(err instanceof RefdeskError);
      assert.equal(err.code, 'invalid_library_id');
      const shown = /^Invalid library ID "([^"]*)"/.exec(err.message)?.[1] ?? '';
      assert.ok(shown.length <= 83, `shown ${shown.length} chars`);
      assert.ok(shown.endsWith('...'));
      assert.ok(err.message.length < 300, err.message);
      return true;
    },
  );
  // a segment quoted in the reason is cut short too
  assert.throws(
    () => parseLibraryId('/a/' + 'x'.repeat(90) + ';'),
    (err: unknown) => {
      assert.ok(err instanceof RefdeskError && err.code === 'invalid_library_id');
      assert.ok(err.message.includes(`the name "${'x'.repeat(24)}..." contains ';'`), err.message);
      return true;
    },
  );
  // control characters are replaced, not echoed
  assert.throws(
    () => parseLibraryId('/a/\u202Eevil\u0000'),
    (err: unknown) => {
      assert.ok(err instanceof RefdeskError && err.code === 'invalid_library_id');
      assert.ok(err.message.startsWith('Invalid library ID "/a/\uFFFDevil\uFFFD": '), err.message);
      return true;
    },
  );
});

test('non-string input is rejected, not crashed on', () => {
  for (const v of [undefined, null, 42, {}]) {
    assert.throws(
      () => parseLibraryId(v as unknown as string),
      (err: unknown) => err instanceof RefdeskError && err.code === 'invalid_library_id' && err.message.startsWith('Invalid library ID'),
    );
    assert.equal(tryParseLibraryId(v as unknown as string), null);
  }
});

test('constants', () => {
  assert.equal(LIBRARY_ID_MAX_LENGTH, 500);
  assert.deepEqual([...RESERVED_PREFIXES].sort(), ['confluence', 'docs', 'llmstxt', 'npm', 'openapi', 'packages', 'pypi', 'websites']);
  assert.ok(Object.isFrozen(RESERVED_PREFIXES));
  for (const p of RESERVED_PREFIXES) {
    const parsed = parseLibraryId(`/${p.toUpperCase()}/x`);
    assert.equal(parsed.kind, p);
    assert.equal(parsed.namespace, p);
    assert.equal(parsed.id, `/${p}/x`);
  }
});

test('validateLibraryName', () => {
  for (const ok of ['koa', 'Koa', 'next.js', 'my_docs', 'my-docs', '0day', 'a', 'a..b', 'x'.repeat(100)]) {
    assert.doesNotThrow(() => validateLibraryName(ok), ok);
  }
  const bad: [string, string][] = [
    ['', 'it is empty'],
    ['x'.repeat(101), '101 characters long'],
    ['..', "'..' is not allowed"],
    ['.', "'.' is not allowed"],
    ['.hidden', 'must start with a letter or digit'],
    ['-rf', 'must start with a letter or digit'],
    ['_x', 'must start with a letter or digit'],
    ['my docs', "contains U+0020"],
    ['a/b', "contains '/'"],
    ['a\\b', "contains '\\'"],
    ['a@1', "contains '@'"],
    ['a%2e', "contains '%'"],
    ['a\u0000', 'U+0000 (NUL)'],
    ['re\u0430ct', 'U+0430'],
    ['a\uFF0Fb', 'U+FF0F'],
  ];
  for (const [name, includes] of bad) {
    assert.throws(
      () => validateLibraryName(name),
      (err: unknown) => {
        assert.ok(err instanceof RefdeskError);
        assert.equal(err.code, 'invalid_request');
        assert.ok(err.message.startsWith('Invalid library name "'), err.message);
        assert.ok(err.message.includes(includes), `${JSON.stringify(name)}: ${err.message}`);
        assert.doesNotMatch(err.message, /[\u0000-\u001f]/);
        return true;
      },
      JSON.stringify(name),
    );
  }
});

test('slugifyLibraryName', () => {
  const cases: [string, string][] = [
    ['My Docs!', 'my-docs'],
    ['koa', 'koa'],
    ['Next.js', 'next.js'],
    ['  Hello,   World  ', 'hello-world'],
    ['Café Guide', 'cafe-guide'],
    ['ＦＵＬＬ　width', 'full-width'],
    ['../../etc/passwd', 'etc-passwd'],
    ['a -- b', 'a-b'],
    ['__init__', 'init'],
    ['v1.2.', 'v1.2'],
    ['!!!', ''],
    ['日本語', ''],
    ['', ''],
  ];
  for (const [input, expected] of cases) assert.equal(slugifyLibraryName(input), expected, input);
  assert.equal(slugifyLibraryName('a'.repeat(300)).length, 100);
  // any non-empty slug is a valid library name and forms a valid /docs/<name> ID
  for (const [input] of cases) {
    const slug = slugifyLibraryName(input);
    if (slug === '') continue;
    validateLibraryName(slug);
    assert.equal(parseLibraryId(`/docs/${slug}`).name, slug);
  }
});
