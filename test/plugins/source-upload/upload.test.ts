import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import type { SourceContext, SourceDocument } from '../../../core/contracts.ts';
import { createTestLogger, runSource } from '../../../core/testing/run-source.ts';
import plugin from '../../../plugins/source-upload/index.ts';
import { UploadSource } from '../../../plugins/source-upload/upload-source.ts';
import { rejectsWith, tempDir, writeTree } from './helpers.ts';

const paths = (docs: SourceDocument[]): string[] => docs.map((d) => d.path);

test('a folder: nested docs in path order, with node_modules, .git, hidden, binary and .js files skipped', async (t) => {
  const root = await tempDir(t);
  await writeTree(root, {
    'README.md': '# Readme\n',
    'a-b.md': 'dash\n',
    'a/b.md': 'nested\n',
    'docs/guide.md': '\uFEFF# Guide\n\nText.\n',
    'docs/api/ref.mdx': '# Ref\n',
    'docs/notes.txt': 'notes\n',
    'docs/spec.rst': 'Spec\n====\n',
    'docs/manual.adoc': '= Manual\n',
    'docs/old.markdown': '# Old\n',
    'docs/UPPER.MD': '# Upper\n',
    'docs/.hidden.md': 'hidden\n',
    'docs/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0xff]),
    'docs/binary.md': Buffer.from([0x23, 0x20, 0xff, 0xfe, 0x80, 0x81]),
    'node_modules/pkg/README.md': '# dep\n',
    'docs/node_modules/x/y.md': '# dep\n',
    '.git/description.md': 'git\n',
    '.github/CONTRIBUTING.md': 'contrib\n',
    'src/index.js': 'export {};\n',
  });
  const res = await runSource(new UploadSource(), { path: root });
  assert.deepEqual(paths(res.documents), [
    'README.md',
    'a-b.md',
    'a/b.md',
    'docs/UPPER.MD',
    'docs/api/ref.mdx',
    'docs/guide.md',
    'docs/manual.adoc',
    'docs/notes.txt',
    'docs/old.markdown',
    'docs/spec.rst',
  ]);
  const byPath = Object.fromEntries(res.documents.map((d) => [d.path, d]));
  assert.deepEqual(byPath['docs/guide.md'], { path: 'docs/guide.md', format: 'markdown', content: '# Guide\n\nText.\n' });
  assert.equal(byPath['docs/api/ref.mdx'].format, 'mdx');
  assert.equal(byPath['docs/notes.txt'].format, 'text');
  assert.equal(byPath['docs/spec.rst'].format, 'rst');
  assert.equal(byPath['docs/manual.adoc'].format, 'asciidoc');
  assert.equal(byPath['docs/old.markdown'].format, 'markdown');
  assert.equal(byPath['docs/UPPER.MD'].format, 'markdown');

  const warns = res.logs.filter((l) => l.level === 'warn');
  assert.equal(warns.length, 1, JSON.stringify(res.logs));
  assert.match(warns[0].message, /docs\/binary\.md.*UTF-8/);
  const bytes = res.documents.reduce((n, d) => n + Buffer.byteLength(d.content), 0) + 3; // + the BOM
  assert.deepEqual(res.logs.at(-1), { level: 'info', message: `read 10 files, ${bytes} bytes` });
  assert.deepEqual(res.progress.at(-1), { files: 10, bytes });
});

test('a single .md file becomes one document named by its basename', async (t) => {
  const root = await tempDir(t);
  await writeTree(root, { 'some/where/Guide.md': '# Guide\n' });
  const res = await runSource(new UploadSource(), { path: join(root, 'some/where/Guide.md') });
  assert.deepEqual(res.documents, [{ path: 'Guide.md', format: 'markdown', content: '# Guide\n' }]);
});

test('a single file that is neither documentation nor an archive is refused', async (t) => {
  const root = await tempDir(t);
  await writeTree(root, { 'index.js': 'export {};\n' });
  await rejectsWith(runSource(new UploadSource(), { path: join(root, 'index.js') }), 'invalid_source', ['.md', 'index.js']);
});

test('symlinks: followed inside the folder, skipped with a warning when they escape it or loop', async (t) => {
  const dir = await tempDir(t);
  const root = join(dir, 'root');
  await writeTree(dir, {
    'outside/secret.md': '# Secret\n',
    'outside/more/leak.md': '# Leak\n',
    'root/docs/a.md': '# A\n',
  });
  await symlink(join(dir, 'outside/secret.md'), join(root, 'docs/escape.md'));
  await symlink('../../outside/secret.md', join(root, 'docs/relative-escape.md'));
  await symlink(join(dir, 'outside/more'), join(root, 'linkdir'));
  await symlink(join(root, 'docs/a.md'), join(root, 'docs/inside.md'));
  await symlink(root, join(root, 'docs/loop'));
  await symlink(join(root, 'missing.md'), join(root, 'docs/broken.md'));

  const res = await runSource(new UploadSource(), { path: root });
  assert.deepEqual(paths(res.documents), ['docs/a.md', 'docs/inside.md']);
  assert.equal(res.documents[1].content, '# A\n');
  const warns = res.logs.filter((l) => l.level === 'warn').map((l) => l.message);
  for (const name of ['docs/escape.md', 'docs/relative-escape.md', 'linkdir']) {
    assert.ok(warns.some((w) => w.includes(name) && w.includes('outside')), `no warning for ${name}: ${warns.join(' | ')}`);
  }
  assert.ok(warns.some((w) => w.includes('docs/loop')));
  assert.ok(!res.documents.some((d) => d.content.includes('Secret') || d.content.includes('Leak')));
});

test('the koa corpus folder yields exactly its 11 markdown files', async (t) => {
  const corpus = fileURLToPath(new URL('../../../../shared/corpora/koa', import.meta.url));
  if (!existsSync(corpus)) {
    t.skip(`corpus not found at ${corpus}`);
    return;
  }
  const res = await runSource(new UploadSource(), { path: corpus });
  assert.equal(res.documents.length, 11);
  assert.ok(paths(res.documents).includes('docs/api/context.md'));
  assert.deepEqual(paths(res.documents), [...paths(res.documents)].sort());
  for (const d of res.documents) {
    assert.match(d.path, /^docs\/[a-z0-9/-]+\.md$/);
    assert.equal(d.format, 'markdown');
    assert.ok(d.content.length > 0);
  }
});

test('include and exclude prefixes are relative to the root; exclude wins', async (t) => {
  const root = await tempDir(t);
  await writeTree(root, {
    'README.md': '# r\n',
    'docs/a.md': '# a\n',
    'docs/internal/b.md': '# b\n',
    'docs-old/c.md': '# c\n',
    'blog/d.md': '# d\n',
  });
  const res = await runSource(new UploadSource(), { path: root, include: ['docs/'], exclude: ['docs/internal'] });
  assert.deepEqual(paths(res.documents), ['docs/a.md']);
  const res2 = await runSource(new UploadSource(), { path: root, include: ['./docs', 'README.md'] });
  assert.deepEqual(paths(res2.documents), ['README.md', 'docs/a.md', 'docs/internal/b.md']);
});

test('an empty folder, or one without documentation, is no_documentation and names the extensions', async (t) => {
  const root = await tempDir(t);
  const source = new UploadSource();
  await rejectsWith(runSource(source, { path: root }), 'no_documentation', ['.md', '.mdx', '.markdown', '.txt', '.rst', '.adoc']);
  await writeTree(root, { 'src/index.js': '1', 'node_modules/a/readme.md': '# a' });
  await rejectsWith(runSource(source, { path: root }), 'no_documentation', [root]);
});

test('a folder whose only documents are unreadable is no_documentation', async (t) => {
  const root = await tempDir(t);
  await writeTree(root, { 'latin1.md': Buffer.from('caf\xe9\n', 'latin1') });
  await rejectsWith(runSource(new UploadSource(), { path: root }), 'no_documentation', ['skipped']);
});

test('a missing path and a relative path are invalid_source', async (t) => {
  const root = await tempDir(t);
  const missing = join(root, 'nope');
  await rejectsWith(runSource(new UploadSource(), { path: missing }), 'invalid_source', [`Upload path not found: ${missing}`]);
  await rejectsWith(runSource(new UploadSource(), { path: 'docs/x' }), 'invalid_source', ['absolute']);
  await rejectsWith(runSource(new UploadSource(), {}), 'invalid_source', ['path']);
});

test('a file that is not valid UTF-8 is skipped with a warning; a BOM is stripped', async (t) => {
  const root = await tempDir(t);
  await writeTree(root, {
    'good.md': '\uFEFF# Café\n',
    'latin1.md': Buffer.from('# caf\xe9\n', 'latin1'),
    'utf16.md': Buffer.from('# hi\n', 'utf16le'),
  });
  const res = await runSource(new UploadSource(), { path: root });
  assert.deepEqual(res.documents, [{ path: 'good.md', format: 'markdown', content: '# Café\n' }]);
  const warns = res.logs.filter((l) => l.level === 'warn').map((l) => l.message);
  assert.equal(warns.length, 2);
  assert.match(warns[0], /latin1\.md.*not valid UTF-8/);
  assert.match(warns[1], /utf16\.md/);
});

test('files over maxFileBytes are skipped with a warning, not fatal', async (t) => {
  const root = await tempDir(t);
  await writeTree(root, { 'big.md': 'x'.repeat(2000), 'small.md': 'ok' });
  const res = await runSource(new UploadSource({ maxFileBytes: 1000 }), { path: root });
  assert.deepEqual(paths(res.documents), ['small.md']);
  assert.ok(res.logs.some((l) => l.level === 'warn' && l.message.includes('big.md') && l.message.includes('maxFileBytes=1000')));
});

test('progress gives the total first, then is reported every 50 files and at the end', async (t) => {
  const root = await tempDir(t);
  const files: Record<string, string> = {};
  for (let i = 0; i < 120; i++) files[`p/${String(i).padStart(3, '0')}.md`] = 'ab';
  await writeTree(root, files);
  const res = await runSource(new UploadSource(), { path: root });
  assert.equal(res.documents.length, 120);
  assert.deepEqual(res.progress, [
    { total: 120 },
    { files: 50, bytes: 100 },
    { files: 100, bytes: 200 },
    { files: 120, bytes: 240 },
  ]);
});

test('an aborted signal stops the read', async (t) => {
  const root = await tempDir(t);
  const files: Record<string, string> = {};
  for (let i = 0; i < 10; i++) files[`${i}.md`] = `# ${i}\n`;
  await writeTree(root, files);

  const pre = new AbortController();
  pre.abort();
  await assert.rejects(runSource(new UploadSource(), { path: root }, { signal: pre.signal }), { name: 'AbortError' });

  const ac = new AbortController();
  const ctx: SourceContext = { libraryId: '/docs/x', version: '', spec: { path: root }, signal: ac.signal, previous: new Map(), log() {}, progress() {} };
  const it = new UploadSource().read(ctx)[Symbol.asyncIterator]();
  const first = await it.next();
  assert.equal(first.done, false);
  ac.abort();
  await assert.rejects(it.next(), { name: 'AbortError' });
});

test('the manifest: a source definition whose create() builds the source; schemas fill defaults and refuse unknown keys', async (t) => {
  assert.equal(plugin.name, '@refdesk/source-upload');
  assert.equal(plugin.version, '1.0.0');
  assert.equal(plugin.kernel, '^1.0.0');
  assert.equal(plugin.definitions.length, 1);
  const def = plugin.definitions[0];
  assert.equal(def.role, 'source');
  assert.equal(def.kind, 'upload');
  assert.ok('idPrefix' in def && def.idPrefix === 'docs');
  assert.ok('specSchema' in def);

  const ajv = new Ajv({ useDefaults: true, strict: true, allErrors: true });
  const options: Record<string, unknown> = {};
  assert.ok(ajv.validate(def.options, options), ajv.errorsText());
  assert.deepEqual(options, {
    maxFiles: 20000,
    maxBytes: 200 * 1024 * 1024,
    maxFileBytes: 10 * 1024 * 1024,
    maxArchiveEntries: 100000,
    extensions: ['.md', '.mdx', '.markdown', '.txt', '.rst', '.adoc'],
  });
  assert.equal(ajv.validate(def.options, { maxFiles: 3, bogus: 1 }), false);
  assert.ok(ajv.validate(def.specSchema, { path: '/srv/docs', include: ['docs/'], exclude: ['docs/internal/'] }));
  assert.equal(ajv.validate(def.specSchema, { path: '/srv/docs', token: 'x' }), false);
  assert.equal(ajv.validate(def.specSchema, {}), false);

  const logger = createTestLogger();
  const source = await def.create({ ...options, maxFiles: 5 }, { logger });
  assert.ok(source instanceof UploadSource);
  assert.equal(source.options.maxFiles, 5);

  const root = await tempDir(t);
  await mkdir(join(root, 'd'));
  await writeFile(join(root, 'd/x.md'), '# x');
  const res = await runSource(source as UploadSource, { path: root });
  assert.deepEqual(paths(res.documents), ['d/x.md']);
  assert.ok(logger.lines.some((l) => l.level === 'debug'));
});
