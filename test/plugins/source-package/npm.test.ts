import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { PreviousDocument, SourceDocument } from '../../../core/contracts.ts';
import { createFetch } from '../../../core/services.ts';
import { runSource, runSourceContract } from '../../../core/testing/index.ts';
import { NpmSource, npmVersions } from '../../../plugins/source-package/npm-source.ts';
import { deriveNpmId } from '../../../plugins/source-package/names.ts';
import { startNpmRegistry } from './registry.ts';
import { rejection } from '../../helpers/rejects-with.ts';

const FAST = { retryBaseDelayMs: 2, retryAttempts: 3 };

const INDEX_DTS = `import { Options } from './options.js';
export * from './errors';
/**
 * Parses a widget description.
 * @param text - the source text
 * @returns the parsed widget
 * @example
 * const w = parseWidget('a');
 */
export declare function parseWidget(text: string, options?: Options): Widget;
export declare function parseWidget(text: Buffer): Widget;
/** A parsed widget. */
export interface Widget {
    name: string;
    /** Size in pixels. */
    size: number;
}
declare function internalHelper(): void;
export type WidgetKind = 'small' | 'large';
`;
const OPTIONS_DTS = `/** Options of parseWidget. */\nexport interface Options {\n    strict?: boolean;\n}\n`;
const ERRORS_DTS = `/** Thrown when a widget cannot be parsed. */\nexport declare class WidgetError extends Error {\n    readonly line: number;\n}\n`;

function widgetsV2(): Record<string, string> {
  return {
    'package.json': JSON.stringify({ name: 'widgets', version: '2.0.0', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } }),
    'README.md': '# widgets\n\nParse widgets.\n\n```js\nimport { parseWidget } from "widgets";\n```\n',
    'docs/guide/usage.md': '# Usage\n\nCall parseWidget.\n',
    'docs/intro.mdx': '# Intro\n\nWelcome.\n',
    'CHANGELOG.md': '# Changes\n\n- lots\n',
    'LICENSE': 'MIT',
    'dist/index.js': 'export function parseWidget() {}',
    'dist/index.d.ts': INDEX_DTS,
    'dist/options.d.ts': OPTIONS_DTS,
    'dist/errors.d.ts': ERRORS_DTS,
    'dist/unreferenced.d.ts': 'export declare const hidden: number;\n',
    'node_modules/dep/README.md': '# dep\n',
  };
}

function source(options = {}): NpmSource {
  return new NpmSource({ ...FAST, ...options }, { fetch: createFetch(5_000) });
}


function previousOf(docs: SourceDocument[]): Map<string, PreviousDocument> {
  return new Map(docs.map((d) => [d.path, { hash: d.hash ?? '', meta: d.meta ?? {} }]));
}

async function registry(t: Parameters<typeof startNpmRegistry>[0]) {
  return startNpmRegistry(t, {
    widgets: {
      versions: {
        '1.0.0': { files: { 'package.json': JSON.stringify({ name: 'widgets', version: '1.0.0', types: 'index.d.ts' }), 'README.md': '# widgets 1\n\nOld.\n', 'index.d.ts': 'export declare function oldWidget(): void;\n' } },
        '2.0.0': { files: widgetsV2() },
        '3.0.0-beta.1': { files: { 'package.json': '{}', 'README.md': '# beta\n' } },
      },
      tags: { latest: '2.0.0', next: '3.0.0-beta.1' },
    },
    '@acme/kit': { versions: { '0.1.0': { files: { 'package.json': '{"name":"@acme/kit"}', 'readme.markdown': '# Kit\n\nScoped.\n' } } } },
    bare: { versions: { '1.0.0': { files: { 'package.json': '{}', 'lib/x.js': '' } } }, readme: '# bare\n\nFrom the registry.\n' },
  });
}

describe('npm source', () => {
  test('latest version: README, docs, markdown and the public declarations as API pages', async (t) => {
    const reg = await registry(t);
    const { documents, logs } = await runSource(source(), { name: 'widgets', registry: reg.base });
    assert.deepEqual(documents.map((d) => d.path), ['README.md', 'docs/guide/usage.md', 'docs/intro.mdx', 'dist/index.d.ts', 'dist/options.d.ts', 'dist/errors.d.ts']);
    assert.equal(documents[2].format, 'mdx');
    assert.ok(documents.every((d) => d.meta?.version === '2.0.0' && d.meta?.integrity?.startsWith('sha512-')));
    const api = documents[3];
    assert.equal(api.format, 'markdown');
    assert.equal(api.title, 'widgets API: dist/index.d.ts');
    assert.match(api.content, /^# widgets API: dist\/index\.d\.ts/);
    // One section per exported declaration, overloads together, TSDoc as prose, non-exported left out.
    assert.deepEqual([...api.content.matchAll(/^## (.+)$/gm)].map((m) => m[1]), ['parseWidget', 'Widget', 'WidgetKind']);
    assert.match(api.content, /## parseWidget\n\nParses a widget description\.\n- `text`: the source text\nReturns: the parsed widget\n\nExample:\n\n```ts\nconst w = parseWidget\('a'\);\n```\n\n```ts\nexport declare function parseWidget\(text: string, options\?: Options\): Widget;\nexport declare function parseWidget\(text: Buffer\): Widget;\n```/);
    assert.ok(!api.content.includes('internalHelper'));
    assert.match(documents[5].content, /## WidgetError\n\nThrown when a widget cannot be parsed\./);
    assert.ok(logs.some((l) => /npm widgets@2\.0\.0; latest 2\.0\.0, 3 versions published/.test(l.message)));
    assert.equal(reg.server.hits('/widgets').length, 1);
    assert.match(String(reg.server.hits('/widgets')[0].headers.accept), /application\/vnd\.npm\.install-v1\+json/);
  });

  test('a pinned version (or dist-tag) indexes that version', async (t) => {
    const reg = await registry(t);
    let out = await runSource(source(), { name: 'widgets', registry: reg.base }, { version: '1.0.0' });
    assert.deepEqual(out.documents.map((d) => d.path), ['README.md', 'index.d.ts']);
    assert.match(out.documents[0].content, /Old\./);
    assert.match(out.documents[1].content, /## oldWidget/);
    out = await runSource(source(), { name: 'widgets', registry: reg.base }, { version: 'next' });
    assert.equal(out.documents[0].meta?.version, '3.0.0-beta.1');
    const e = await rejection(runSource(source(), { name: 'widgets', registry: reg.base }, { version: '9.9.9' }));
    assert.equal(e.code, 'version_not_found');
    assert.equal(e.message, 'The npm package "widgets" has no version "9.9.9" (latest: 2.0.0; recent: 3.0.0-beta.1, 2.0.0, 1.0.0).');
  });

  test('a scoped package is asked for as @scope%2fname', async (t) => {
    const reg = await registry(t);
    const { documents } = await runSource(source(), { name: '@acme/kit', registry: reg.base });
    assert.deepEqual(documents.map((d) => d.path), ['readme.markdown']);
    assert.equal(reg.server.requests[0].path, '/@acme%2Fkit');
    assert.equal(deriveNpmId({ name: '@acme/kit' }), '/npm/@acme/kit');
  });

  test('no README in the tarball: the registry readme is used', async (t) => {
    const reg = await registry(t);
    const { documents } = await runSource(source(), { name: 'bare', registry: reg.base });
    assert.deepEqual(documents.map((d) => [d.path, d.content]), [['README.md', '# bare\n\nFrom the registry.\n']]);
  });

  test('unknown package, bad name: clear errors', async (t) => {
    const reg = await registry(t);
    let e = await rejection(runSource(source(), { name: 'nope', registry: reg.base }));
    assert.equal(e.code, 'library_not_found');
    assert.equal(e.status, 404);
    assert.equal(e.message, `The npm package "nope" was not found in the registry ${reg.base}. Check the name (scoped packages are written @scope/name) or the registry URL.`);
    e = await rejection(runSource(source(), { name: '../etc/passwd', registry: reg.base }));
    assert.equal(e.code, 'invalid_source');
    assert.match(e.message, /is not a valid npm package name/);
    assert.equal(reg.server.requests.length, 1);
  });

  test('registry 503s are retried with backoff; a registry that keeps failing is a clear job error', async (t) => {
    const reg = await registry(t);
    reg.fail('/widgets', 503, 2);
    const { documents, logs } = await runSource(source(), { name: 'widgets', registry: reg.base });
    assert.equal(documents.length, 6);
    assert.equal(logs.filter((l) => l.message.startsWith('retrying')).length, 2);

    reg.fail('/-/tarballs/widgets-2.0.0.tgz', 500, 99);
    const e = await rejection(runSource(source(), { name: 'widgets', registry: reg.base }));
    assert.equal(e.code, 'invalid_source');
    assert.match(e.message, /^The tarball of widgets@2\.0\.0 could not be read from http:\/\/127\.0\.0\.1:\d+\/-\/tarballs\/widgets-2\.0\.0\.tgz: the server answered HTTP 500 Internal Server Error after 3 attempts\. Try again later\.$/);
  });

  test('refresh of the same tarball reuses every document without downloading it', async (t) => {
    const reg = await registry(t);
    const first = await runSource(source(), { name: 'widgets', registry: reg.base });
    reg.server.requests.length = 0;
    const second = await runSource(source(), { name: 'widgets', registry: reg.base }, { previous: previousOf(first.documents) });
    assert.deepEqual(second.documents.map((d) => [d.path, d.unchanged, d.hash]), first.documents.map((d) => [d.path, true, d.hash]));
    assert.deepEqual(reg.server.requests.map((r) => r.path), ['/widgets']);
    // A new version is read again.
    const third = await runSource(source(), { name: 'widgets', registry: reg.base }, { previous: previousOf(first.documents), version: '1.0.0' });
    assert.ok(third.documents.every((d) => !d.unchanged));
  });

  test('tarball entries escaping the package are refused with a warning', async (t) => {
    const reg = await startNpmRegistry(t, {
      evil: { versions: { '1.0.0': { files: { 'README.md': '# evil\n', '../../outside.md': '# outside\n' } } } },
    });
    const { documents, logs } = await runSource(source(), { name: 'evil', registry: reg.base });
    assert.deepEqual(documents.map((d) => d.path), ['README.md']);
    assert.ok(logs.some((l) => l.level === 'warn' && /refused the entry "package\/\.\.\/\.\.\/outside\.md".*'\.\.' segment/.test(l.message)), JSON.stringify(logs));
  });

  test('a tarball that does not match the published integrity is refused', async (t) => {
    const reg = await registry(t);
    const real = await runSource(source(), { name: '@acme/kit', registry: reg.base });
    assert.equal(real.documents.length, 1);
    // Serve a different package's packument pointing at the kit's tarball with the widgets integrity.
    const other = await startNpmRegistry(t, { kit2: { versions: { '1.0.0': { files: { 'README.md': '# x\n' } } } } });
    const swapped = await (await fetch(`${other.base}/kit2`)).json() as { versions: Record<string, { dist: { tarball: string; integrity: string } }> };
    swapped.versions['1.0.0'].dist.integrity = `sha512-${Buffer.alloc(64).toString('base64')}`;
    const { startServer, send } = await import('../../helpers/route-server.ts');
    const lying = await startServer((_req, res) => send(res, 200, JSON.stringify(swapped), 'application/json'), t);
    const e = await rejection(runSource(source(), { name: 'kit2', registry: lying.base }));
    assert.match(e.message, /does not match the sha512 digest the registry published; the download was refused\./);
  });

  test('versions newest first', () => {
    assert.deepEqual(npmVersions({ versions: { '1.0.0': {}, '10.0.0': {}, '2.0.0-rc.1': {}, '2.0.0': {} } }), ['10.0.0', '2.0.0', '2.0.0-rc.1', '1.0.0']);
  });
});

runSourceContract('npm', async () => {
  const reg = await registry(undefined);
  return { source: source(), spec: { name: 'widgets', registry: reg.base }, cleanup: () => reg.server.close() };
});
