import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { test } from 'node:test';
import type { SourceDocument } from '../../../core/contracts.ts';
import { RefdeskError } from '../../../core/errors.ts';
import { runSource } from '../../../core/testing/run-source.ts';
import { UploadSource } from '../../../plugins/source-upload/upload-source.ts';
import { buildTar, buildTarGz, buildZip, paxBody, type TarEntryInput, type ZipEntryInput } from './archive-builders.ts';
import { drain, rejectsWith, tempDir } from './helpers.ts';

const paths = (docs: SourceDocument[]): string[] => docs.map((d) => d.path);

async function put(t: Parameters<typeof tempDir>[0], name: string, data: Buffer): Promise<string> {
  const dir = await tempDir(t);
  const file = join(dir, name);
  await writeFile(file, data);
  return file;
}

const GOOD_ZIP: ZipEntryInput[] = [
  { name: 'proj-main/', unixMode: 0o040755 },
  { name: 'proj-main/README.md', data: '# Project\n' },
  { name: 'proj-main/docs/', unixMode: 0o040755 },
  { name: 'proj-main/docs/guide.md', data: '\uFEFF# Guide\n\n' + 'Words. '.repeat(200), method: 'deflate', unixMode: 0o100644 },
  { name: 'proj-main/docs/api/ref.mdx', data: '# Ref\n', method: 'deflate' },
  { name: 'proj-main/docs/img.png', data: randomBytes(64) },
  { name: 'proj-main/node_modules/x/readme.md', data: '# dep\n' },
  { name: 'proj-main/.github/a.md', data: '# hidden\n' },
  { name: '__MACOSX/proj-main/docs/._guide.md', data: randomBytes(16) },
];

test('a zip with one top-level directory: stripped, filtered, in path order', async (t) => {
  const file = await put(t, 'proj.zip', buildZip(GOOD_ZIP));
  const res = await runSource(new UploadSource(), { path: file });
  assert.deepEqual(paths(res.documents), ['README.md', 'docs/api/ref.mdx', 'docs/guide.md']);
  const guide = res.documents[2];
  assert.equal(guide.format, 'markdown');
  assert.ok(guide.content.startsWith('# Guide\n'));
  assert.deepEqual(res.logs.filter((l) => l.level === 'warn'), []);
  assert.match(res.logs.at(-1)?.message ?? '', /^read 3 files, \d+ bytes$/);
});

test('a zip without a common top-level directory keeps its paths; include applies after stripping', async (t) => {
  const flat = await put(t, 'flat.zip', buildZip([
    { name: 'README.md', data: '# r' },
    { name: 'docs/a.md', data: '# a' },
    { name: './docs/b.txt', data: 'b' },
  ]));
  assert.deepEqual(paths((await runSource(new UploadSource(), { path: flat })).documents), ['README.md', 'docs/a.md', 'docs/b.txt']);
  const proj = await put(t, 'proj.zip', buildZip(GOOD_ZIP));
  const res = await runSource(new UploadSource(), { path: proj, include: ['docs/'], exclude: ['docs/api/'] });
  assert.deepEqual(paths(res.documents), ['docs/guide.md']);
});

const GOOD_TAR: TarEntryInput[] = [
  { name: 'pax_global_header', type: 'g', data: paxBody({ comment: 'abc123' }) },
  { name: 'repo-main/', type: '5' },
  { name: 'repo-main/README.md', data: '# Repo\n' },
  { name: 'repo-main/docs/', type: '5' },
  { name: 'repo-main/docs/guide.md', data: '# Guide\n' },
  { name: 'repo-main/docs/notes.txt', data: 'notes\n' },
  { name: 'repo-main/docs/deep/' + 'n'.repeat(120) + '/page.md', data: '# Long\n' },
  { name: 'repo-main/src/index.js', data: 'export {}\n' },
  { name: 'repo-main/node_modules/dep/README.md', data: '# dep\n' },
  { name: 'repo-main/.git/x.md', data: '# git\n' },
];

test('a tar.gz (GitHub style) has its single top-level directory stripped', async (t) => {
  const file = await put(t, 'repo.tar.gz', buildTarGz(GOOD_TAR));
  const res = await runSource(new UploadSource(), { path: file });
  assert.deepEqual(paths(res.documents), [
    'README.md',
    `docs/deep/${'n'.repeat(120)}/page.md`,
    'docs/guide.md',
    'docs/notes.txt',
  ]);
  assert.deepEqual(res.documents[2], { path: 'docs/guide.md', format: 'markdown', content: '# Guide\n' });
  assert.equal(res.documents[3].format, 'text');
});

test('archives are recognized by their magic bytes: .tgz, plain .tar, and misleading names', async (t) => {
  for (const [name, data] of [
    ['repo.tgz', buildTarGz(GOOD_TAR)],
    ['repo.tar', buildTar(GOOD_TAR)],
    ['upload.bin', buildTarGz(GOOD_TAR)],
    ['upload.dat', buildTar(GOOD_TAR)],
  ] as const) {
    const res = await runSource(new UploadSource(), { path: await put(t, name, data) });
    assert.equal(res.documents.length, 4, name);
  }
  const res = await runSource(new UploadSource(), { path: await put(t, 'docs.data', buildZip(GOOD_ZIP)) });
  assert.deepEqual(paths(res.documents), ['README.md', 'docs/api/ref.mdx', 'docs/guide.md']);
});

test('an archive that holds the same path twice: the last entry wins, with a warning', async (t) => {
  const file = await put(t, 'dup.tgz', buildTarGz([
    { name: 'a.md', data: 'old' },
    { name: './a.md', data: 'new' },
  ]));
  const res = await runSource(new UploadSource(), { path: file });
  assert.deepEqual(res.documents, [{ path: 'a.md', format: 'markdown', content: 'new' }]);
  assert.ok(res.logs.some((l) => l.level === 'warn' && l.message.includes('a.md')));
});

/** Each hostile entry comes after good documents, so a source that yields early would be caught. */
const HOSTILE_ZIP: Array<[string, ZipEntryInput, string]> = [
  ['zip-slip', { name: '../evil.md', data: 'x' }, '../evil.md'],
  ['nested zip-slip', { name: 'docs/../../evil.md', data: 'x' }, 'docs/../../evil.md'],
  ['absolute path', { name: '/etc/evil.md', data: 'x' }, '/etc/evil.md'],
  ['drive path', { name: 'C:\\evil.md', data: 'x' }, 'C:\\evil.md'],
  ['drive-relative path', { name: 'C:evil.md', data: 'x' }, 'C:evil.md'],
  ['UNC path', { name: '\\\\server\\share\\evil.md', data: 'x' }, '\\\\server\\share\\evil.md'],
  ['backslash slip', { name: 'docs\\..\\..\\evil.md', data: 'x' }, 'docs\\..\\..\\evil.md'],
  ['NUL in name', { name: 'docs/evil.md\0.txt', data: 'x' }, 'docs/evil.md\\u0000.txt'],
  ['symlink entry', { name: 'docs/link.md', data: '/etc/passwd', unixMode: 0o120777 }, 'docs/link.md'],
  ['FIFO entry', { name: 'docs/pipe.md', unixMode: 0o010644 }, 'docs/pipe.md'],
];

for (const [label, entry, shown] of HOSTILE_ZIP) {
  test(`zip: ${label} refuses the whole archive (invalid_source naming the entry)`, async (t) => {
    const file = await put(t, 'hostile.zip', buildZip([
      { name: 'README.md', data: '# fine' },
      { name: 'docs/a.md', data: '# fine' },
      entry,
      { name: 'docs/z.md', data: '# fine' },
    ]));
    const { docs, error } = await drain(new UploadSource(), { path: file });
    assert.deepEqual(docs, [], 'nothing may be yielded from an unsafe archive');
    await rejectsWith(Promise.reject(error), 'invalid_source', [`"${shown}"`, 'hostile.zip']);
  });
}

const HOSTILE_TAR: Array<[string, TarEntryInput, string]> = [
  ['zip-slip', { name: '../evil.md', data: 'x' }, '../evil.md'],
  ['absolute path', { name: '/etc/evil.md', data: 'x' }, '/etc/evil.md'],
  ['drive path', { name: 'C:\\evil.md', data: 'x' }, 'C:\\evil.md'],
  ['long name slip via PAX', { name: 'docs/' + 'a/'.repeat(60) + '../'.repeat(70) + 'evil.md', data: 'x' }, 'docs/a/a/'],
  ['symlink entry', { name: 'docs/link.md', type: '2', linkname: '/etc/passwd' }, 'docs/link.md'],
  ['relative symlink entry', { name: 'docs/link2.md', type: '2', linkname: '../../../etc/passwd' }, 'docs/link2.md'],
  ['hardlink entry', { name: 'docs/hard.md', type: '1', linkname: '/etc/passwd' }, 'docs/hard.md'],
  ['character device', { name: 'docs/tty.md', type: '3' }, 'docs/tty.md'],
  ['FIFO', { name: 'docs/fifo.md', type: '6' }, 'docs/fifo.md'],
];

for (const [label, entry, shown] of HOSTILE_TAR) {
  test(`tar.gz: ${label} refuses the whole archive (invalid_source naming the entry)`, async (t) => {
    const file = await put(t, 'hostile.tar.gz', buildTarGz([
      { name: 'README.md', data: '# fine' },
      { name: 'docs/a.md', data: '# fine' },
      entry,
      { name: 'docs/z.md', data: '# fine' },
    ]));
    const { docs, error } = await drain(new UploadSource(), { path: file });
    assert.deepEqual(docs, []);
    const err = await rejectsWith(Promise.reject(error), 'invalid_source', [shown, 'hostile.tar.gz']);
    assert.ok(err.message.length < 600, 'long names are truncated in messages');
  });
}

test('a hostile name in a non-documentation entry (or under node_modules) still refuses the archive', async (t) => {
  const file = await put(t, 'x.zip', buildZip([
    { name: 'docs/a.md', data: '# a' },
    { name: 'node_modules/../../../evil.js', data: 'x' },
  ]));
  await rejectsWith(runSource(new UploadSource(), { path: file }), 'invalid_source', ['node_modules/../../../evil.js']);
});

test('corrupt archives are invalid_source with a clear message', async (t) => {
  const pk = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), randomBytes(2000)]);
  const err = await rejectsWith(runSource(new UploadSource(), { path: await put(t, 'bad.zip', pk) }), 'invalid_source', ['Corrupt zip archive bad.zip']);
  assert.ok(!err.message.includes(' at '), err.message);

  await rejectsWith(runSource(new UploadSource(), { path: await put(t, 'bad2.zip', randomBytes(300)) }), 'invalid_source', ['bad2.zip']);

  const gz = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), randomBytes(500)]);
  await rejectsWith(runSource(new UploadSource(), { path: await put(t, 'bad.tgz', gz) }), 'invalid_source', ['bad.tgz']);

  const truncated = buildTarGz(GOOD_TAR).subarray(0, 60);
  await rejectsWith(runSource(new UploadSource(), { path: await put(t, 'cut.tar.gz', truncated) }), 'invalid_source', ['cut.tar.gz']);

  const notTar = gzipSync('# just a gzipped markdown file\n');
  await rejectsWith(runSource(new UploadSource(), { path: await put(t, 'page.md.gz', notTar) }), 'invalid_source', ['tar']);

  const badCrc = buildZip([{ name: 'a.md', data: '# a', crc: 1234 }]);
  await rejectsWith(runSource(new UploadSource(), { path: await put(t, 'crc.zip', badCrc) }), 'invalid_source', ['CRC', '"a.md"']);

  const twice = gzipSync(buildTarGz(GOOD_TAR));
  await rejectsWith(runSource(new UploadSource(), { path: await put(t, 'twice.tgz', twice) }), 'invalid_source', ['compressed twice']);
});

test('an archive without documentation is no_documentation; an empty zip too', async (t) => {
  const file = await put(t, 'code.tgz', buildTarGz([{ name: 'src/index.js', data: '1' }]));
  await rejectsWith(runSource(new UploadSource(), { path: file }), 'no_documentation', ['.md', '.adoc', 'code.tgz']);
  await rejectsWith(runSource(new UploadSource(), { path: await put(t, 'empty.zip', buildZip([])) }), 'no_documentation', ['.md']);
});

test('non-UTF-8 archive members are skipped with a warning', async (t) => {
  const file = await put(t, 'mixed.zip', buildZip([
    { name: 'good.md', data: '# ok' },
    { name: 'bad.md', data: Buffer.from('caf\xe9', 'latin1') },
  ]));
  const res = await runSource(new UploadSource(), { path: file });
  assert.deepEqual(paths(res.documents), ['good.md']);
  assert.ok(res.logs.some((l) => l.level === 'warn' && l.message.includes('bad.md') && l.message.includes('UTF-8')));
});

test('aborting stops an archive read', async (t) => {
  const file = await put(t, 'repo.tgz', buildTarGz(GOOD_TAR));
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(runSource(new UploadSource(), { path: file }, { signal: ac.signal }), { name: 'AbortError' });
  const zip = await put(t, 'proj.zip', buildZip(GOOD_ZIP));
  const ac2 = new AbortController();
  const { docs, error } = await (async () => {
    const out: SourceDocument[] = [];
    try {
      for await (const d of new UploadSource().read({ libraryId: '/docs/x', version: '', spec: { path: zip }, signal: ac2.signal, previous: new Map(), log() {}, progress() {} })) {
        out.push(d);
        ac2.abort();
      }
    } catch (e) {
      return { docs: out, error: e };
    }
    return { docs: out, error: null };
  })();
  assert.equal(docs.length, 1);
  assert.ok(error instanceof Error && error.name === 'AbortError', String(error));
  assert.ok(!(error instanceof RefdeskError));
});
