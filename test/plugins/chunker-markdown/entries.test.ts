import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import type { DocumentFormat, Snippet } from '../../../core/contracts.ts';
import { headingNames, parseSignature } from '../../../plugins/chunker-markdown/entries.ts';
import { MarkdownChunker } from '../../../plugins/chunker-markdown/markdown-chunker.ts';
import { htmlToMarkdown } from '../../../plugins/source-website/to-markdown.ts';

const chunker = new MarkdownChunker({ maxInfoTokens: 400, maxDescriptionChars: 600 });
const chunk = (path: string, content: string, format: DocumentFormat = 'markdown') => chunker.chunk({ path, format, content });
/** The entry snippet (a code snippet holding a signature) titled `title`. */
const entryOf = (sn: Snippet[], title: string) => sn.find((s) => s.type === 'code' && s.title === title);

describe('reference entries: signatures', () => {
  test('parseSignature takes signatures of several languages and names them', () => {
    const cases: Array<[string, boolean, string]> = [
      ['subprocess.check_output(args, *, stdin=None, shell=False)', false, 'subprocess.check_output'],
      ['awaitable asyncio.gather(*aws, return_exceptions=False)', true, 'asyncio.gather'],
      ['pub fn spawn<F>(future: F) -> JoinHandle<F::Output>', false, 'spawn'],
      ['public static String valueOf(int i)', false, 'valueOf'],
      ['func (c *fiber.Ctx) Accepts(offers ...string) string', false, 'Ctx.Accepts'],
      ['▸ createStore<T>(init: StateCreator<T>): StoreApi<T>', false, 'createStore'],
      ['exception copy.Error', true, 'copy.Error'],
      ['subprocess.PIPE', true, 'subprocess.PIPE'],
    ];
    for (const [text, code, name] of cases) assert.equal(parseSignature(text, code)?.name, name, text);
  });

  test('parseSignature takes decorators (Sphinx py:decorator): the name without its @', () => {
    const cases: Array<[string, boolean, string]> = [
      ['@functools.lru_cache(maxsize=128, typed=False)', false, 'functools.lru_cache'],
      ['@functools.lru_cache(maxsize=128, typed=False)', true, 'functools.lru_cache'],
      ['@contextlib.contextmanager', true, 'contextlib.contextmanager'],
      ['@classmethod', true, 'classmethod'],
    ];
    for (const [text, code, name] of cases) {
      const sig = parseSignature(text, code);
      assert.equal(sig?.name, name, text);
      assert.equal(sig?.signature, text, 'the signature keeps its @');
    }
    // A name alone is an entry only in inline code, a decorator too; a mention is not one.
    assert.equal(parseSignature('@contextlib.contextmanager', false), null);
    assert.equal(parseSignature('@overload-decorated definitions', true), null);
    assert.equal(parseSignature('@', true), null);
  });

  test('parseSignature refuses prose, commands and bare words', () => {
    for (const [text, code] of [
      ['fastify.all(path, [options], handler) will add the same handler to all the supported methods.', false],
      ['foo(x): Returns a thing.', false],
      ['Call run(args)', false],
      ['The foo() function', false],
      ['npm install', true],
      ['args', true],
      ['subprocess.PIPE', false],
    ] as const)
      assert.equal(parseSignature(text, code), null, text);
  });

  test('headingNames matches a heading to the entry it names', () => {
    assert.ok(headingNames('valueOf', 'valueOf'));
    assert.ok(headingNames('Method valueOf', 'valueOf'));
    assert.ok(headingNames('createStore()', 'createStore'));
    assert.ok(headingNames('tokio::spawn', 'spawn'));
    assert.ok(!headingNames('Examples', 'spawn'));
    assert.ok(!headingNames(undefined, 'spawn'));
  });
});

describe('reference entries as snippets', () => {
  test('Python library reference (devdocs text): each entry a section titled with its qualified name, methods qualified by their class', () => {
    const text = [
      '# subprocess — Subprocess management',
      '',
      '## Older high-level API',
      '',
      '`subprocess.check_output(args, *, stdin=None, stderr=None, shell=False)`',
      '',
      '    ',
      'Run command with arguments and return its output. If the return code was',
      'non-zero it raises a `CalledProcessError`. More details follow here.',
      '',
      '`class subprocess.CompletedProcess`',
      '',
      '    ',
      'The return value from `run()`, representing a process that has finished.',
      '',
      '`check_returncode()`',
      '',
      '    ',
      'If `returncode` is non-zero, raise a `CalledProcessError`.',
      '',
    ].join('\n');
    const sn = chunk('library/subprocess.txt', text, 'text');
    const entry = entryOf(sn, 'subprocess.check_output');
    assert.ok(entry, JSON.stringify(sn.map((s) => s.title)));
    assert.equal(entry.code, 'subprocess.check_output(args, *, stdin=None, stderr=None, shell=False)');
    assert.equal(entry.description, 'Run command with arguments and return its output. If the return code was non-zero it raises a `CalledProcessError`.');
    assert.deepEqual(entry.breadcrumb, ['subprocess — Subprocess management', 'Older high-level API', 'subprocess.check_output']);
    assert.deepEqual([entry.lineStart, entry.lineEnd], [5, 5]);
    const info = sn.find((s) => s.type === 'info' && s.title === 'subprocess.check_output');
    assert.ok(info && /More details follow here/.test(info.content));
    assert.deepEqual(info.breadcrumb, entry.breadcrumb);
    const method = entryOf(sn, 'subprocess.CompletedProcess.check_returncode');
    assert.ok(method, 'a method after its class is named with the class');
    assert.equal(method.code, 'check_returncode()');
  });

  test('a decorator entry (devdocs text) is a section titled with its qualified name', () => {
    const text = [
      '# functools — Higher-order functions',
      '',
      '`@functools.lru_cache(user_function)`',
      '',
      '`@functools.lru_cache(maxsize=128, typed=False)`',
      '',
      '    ',
      'Decorator to wrap a function with a memoizing callable that saves up to the maxsize most recent calls.',
      '',
      '`@functools.total_ordering`',
      '',
      '    ',
      'Given a class defining one or more rich comparison ordering methods, this class decorator supplies the rest.',
      '',
    ].join('\n');
    const sn = chunk('library/functools.txt', text, 'text');
    const cache = entryOf(sn, 'functools.lru_cache');
    assert.ok(cache, JSON.stringify(sn.map((s) => s.title)));
    // The overload right after the first signature is part of the same entry.
    assert.equal(cache.code, '@functools.lru_cache(user_function)\n@functools.lru_cache(maxsize=128, typed=False)');
    assert.equal(sn.filter((s) => s.title === 'functools.lru_cache' && s.type === 'code').length, 1);
    assert.match(cache.description, /^Decorator to wrap a function with a memoizing callable/);
    assert.deepEqual(cache.breadcrumb, ['functools — Higher-order functions', 'functools.lru_cache']);
    const ordering = entryOf(sn, 'functools.total_ordering');
    assert.ok(ordering);
    assert.equal(ordering.code, '@functools.total_ordering');
  });

  test('Sphinx HTML (as the website source converts it): each <dt> signature with its <dd> an entry', () => {
    const html = `<div><h1>urllib.request</h1><h2>Legacy interface</h2>
      <dl class="py function"><dt class="sig sig-object py" id="urllib.request.urlretrieve"><span class="sig-prename descclassname">urllib.request.</span><span class="sig-name descname">urlretrieve</span><span class="sig-paren">(</span><em class="sig-param">url</em>, <em class="sig-param">filename=None</em><span class="sig-paren">)</span><a class="headerlink" href="#urllib.request.urlretrieve">¶</a></dt>
      <dd><p>Copy a network object denoted by a URL to a local file. If the URL points to a local file, the object will not be copied.</p></dd></dl>
      <dl class="py function"><dt class="sig sig-object py" id="urllib.request.urlcleanup"><span class="sig-prename descclassname">urllib.request.</span><span class="sig-name descname">urlcleanup</span><span class="sig-paren">(</span><span class="sig-paren">)</span><a class="headerlink" href="#urllib.request.urlcleanup">¶</a></dt>
      <dd><p>Cleans up temporary files that may have been left behind by previous calls.</p></dd></dl></div>`;
    const md = htmlToMarkdown(new JSDOM(html).window.document.body.firstElementChild!);
    const sn = chunk('library/urllib.request.html', md);
    const entry = entryOf(sn, 'urllib.request.urlretrieve');
    assert.ok(entry, md);
    assert.equal(entry.code, 'urllib.request.urlretrieve(url, filename=None)');
    assert.equal(entry.description, 'Copy a network object denoted by a URL to a local file. If the URL points to a local file, the object will not be copied.');
    assert.deepEqual(entry.breadcrumb, ['urllib.request', 'Legacy interface', 'urllib.request.urlretrieve']);
    assert.ok(entryOf(sn, 'urllib.request.urlcleanup'));
  });

  test('javadoc and TypeDoc: the signature under a heading naming it makes that section the entry', () => {
    const javadoc = ['# Class String', '', '## Method Details', '', '### valueOf', '', 'public static String valueOf(int i)', '', 'Returns the string representation of the int argument. The representation is exactly the one returned by toString.', ''].join('\n');
    const sn = chunk('java/lang/String.md', javadoc);
    const entry = entryOf(sn, 'valueOf');
    assert.ok(entry, JSON.stringify(sn.map((s) => [s.type, s.title])));
    assert.equal(entry.code, 'public static String valueOf(int i)');
    assert.deepEqual(entry.breadcrumb, ['Class String', 'Method Details', 'valueOf']);
    assert.match(entry.description, /^Returns the string representation of the int argument\./);

    const typedoc = ['# Module: vanilla', '', '## Functions', '', '### createStore', '', '▸ **createStore**<`T`>(`initializer`): `StoreApi`<`T`>', '', 'Creates a store with its state and actions.', ''].join('\n');
    const td = entryOf(chunk('modules/vanilla.md', typedoc), 'createStore');
    assert.ok(td);
    assert.equal(td.code, '▸ **createStore**<`T`>(`initializer`): `StoreApi`<`T`>'.replace(/\*\*|`/g, ''));
  });

  test('rustdoc and Go doc entries in markdown: several signature paragraphs on a page', () => {
    const rust = ['# Struct tokio::runtime::Runtime', '', '## Implementations', '', '`pub fn new() -> Result<Runtime>`', '', 'Creates a new runtime instance with default configuration values.', '', '`pub fn block_on<F: Future>(&self, future: F) -> F::Output`', '', 'Runs a future to completion on the Tokio runtime.', ''].join('\n');
    const sn = chunk('runtime/struct.Runtime.md', rust);
    const blockOn = entryOf(sn, 'block_on');
    assert.ok(blockOn, JSON.stringify(sn.map((s) => s.title)));
    assert.deepEqual(blockOn.breadcrumb, ['Struct tokio::runtime::Runtime', 'Implementations', 'block_on']);
    assert.equal(blockOn.description, 'Runs a future to completion on the Tokio runtime.');
    assert.ok(entryOf(sn, 'new'));

    const go = ['# http', '', '## Functions', '', '`func Get(url string) (resp *Response, err error)`', '', 'Get issues a GET to the specified URL.', '', '`func (c *Client) Do(req *Request) (*Response, error)`', '', 'Do sends an HTTP request and returns an HTTP response.', ''].join('\n');
    const g = chunk('net/http.md', go);
    assert.ok(entryOf(g, 'Get'));
    assert.equal(entryOf(g, 'Client.Do')?.description, 'Do sends an HTTP request and returns an HTTP response.');
  });

  test('a guide with one call in a paragraph of its own is not cut into entries', () => {
    const guide = ['# Routes', '', 'Declare a route:', '', '`fastify.route(options)`', '', 'The options object holds the method, the url and the handler.', ''].join('\n');
    const sn = chunk('docs/routes.md', guide);
    assert.ok(sn.every((s) => s.breadcrumb.length === 1), JSON.stringify(sn.map((s) => s.breadcrumb)));
    assert.ok(!sn.some((s) => s.type === 'code'));
  });
});
