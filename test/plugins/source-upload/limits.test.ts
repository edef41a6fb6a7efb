import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { runSource } from '../../../core/testing/run-source.ts';
import { UploadSource } from '../../../plugins/source-upload/upload-source.ts';
import { buildTarGz, buildZip, type TarEntryInput, type ZipEntryInput } from './archive-builders.ts';
import { drain, rejectsWith, tempDir, writeTree } from './helpers.ts';

async function put(t: Parameters<typeof tempDir>[0], name: string, data: Buffer): Promise<string> {
  const file = join(await tempDir(t), name);
  await writeFile(file, data);
  return file;
}

const MiB = 1024 * 1024;

test('maxFiles: a folder, a zip and a tar.gz with more documentation files are too_large', async (t) => {
  const root = await tempDir(t);
  await writeTree(root, { 'a.md': 'a', 'b.md': 'b', 'c.md': 'c', 'd.md': 'd', 'e.png': 'e' });
  const source = new UploadSource({ maxFiles: 3 });
  const msg = 'Upload too large: more than 3 documentation files (limit maxFiles=3)';
  const folder = await drain(source, { path: root });
  assert.deepEqual(folder.docs, [], 'the folder limit is checked before anything is yielded');
  await rejectsWith(Promise.reject(folder.error), 'too_large', [msg]);

  const entries = ['a.md', 'b.md', 'c.md', 'd.md'].map((name) => ({ name, data: name }));
  await rejectsWith(runSource(source, { path: await put(t, 'x.zip', buildZip(entries)) }), 'too_large', [msg]);
  await rejectsWith(runSource(source, { path: await put(t, 'x.tgz', buildTarGz(entries)) }), 'too_large', [msg]);

  // Only documentation files count.
  const ok = await runSource(source, { path: await put(t, 'ok.zip', buildZip([...entries.slice(0, 3), ...Array.from({ length: 20 }, (_, i) => ({ name: `img/${i}.png`, data: 'x' }))])) });
  assert.equal(ok.documents.length, 3);
});

test('maxBytes: a folder over the limit is too_large before anything is yielded', async (t) => {
  const root = await tempDir(t);
  await writeTree(root, { 'a.md': 'a'.repeat(600), 'b.md': 'b'.repeat(600) });
  const { docs, error } = await drain(new UploadSource({ maxBytes: 1000 }), { path: root });
  assert.deepEqual(docs, []);
  await rejectsWith(Promise.reject(error), 'too_large', ['maxBytes=1000']);
  const ok = await runSource(new UploadSource({ maxBytes: 1200 }), { path: root });
  assert.equal(ok.documents.length, 2);
});

test('maxBytes: a zip whose headers tell the truth is refused early', async (t) => {
  const file = await put(t, 'x.zip', buildZip([{ name: 'a.md', data: 'a'.repeat(600) }, { name: 'b.md', data: 'b'.repeat(600), method: 'deflate' }]));
  const { docs, error } = await drain(new UploadSource({ maxBytes: 1000 }), { path: file });
  assert.deepEqual(docs, []);
  await rejectsWith(Promise.reject(error), 'too_large', ['maxBytes=1000']);
});

test('maxBytes: a zip bomb whose header understates the size still stops at maxBytes', async (t) => {
  const bomb: ZipEntryInput = { name: 'docs/bomb.md', data: Buffer.alloc(8 * MiB, 'a'), method: 'deflate', declaredSize: 100 };
  const file = await put(t, 'bomb.zip', buildZip([{ name: 'docs/a.md', data: '# a' }, bomb]));
  await rejectsWith(runSource(new UploadSource({ maxBytes: MiB }), { path: file }), 'too_large', [`limit maxBytes=${MiB}`]);

  const stored: ZipEntryInput = { name: 'stored.md', data: 'x'.repeat(5000), declaredSize: 10 };
  const file2 = await put(t, 'stored.zip', buildZip([stored]));
  await rejectsWith(runSource(new UploadSource({ maxBytes: 1000 }), { path: file2 }), 'too_large', ['maxBytes=1000']);
});

test('a zip header that lies within the limits is corrupt; one over maxFileBytes is skipped', async (t) => {
  const liar: ZipEntryInput = { name: 'liar.md', data: 'x'.repeat(5000), method: 'deflate', declaredSize: 10 };
  const file = await put(t, 'liar.zip', buildZip([{ name: 'a.md', data: '# a' }, liar]));
  await rejectsWith(runSource(new UploadSource(), { path: file }), 'invalid_source', ['"liar.md"', 'header says 10']);

  const res = await runSource(new UploadSource({ maxFileBytes: 1000 }), { path: file });
  assert.deepEqual(res.documents.map((d) => d.path), ['a.md']);
  assert.ok(res.logs.some((l) => l.level === 'warn' && l.message.includes('liar.md') && l.message.includes('maxFileBytes=1000')));

  const honest = await put(t, 'big.zip', buildZip([{ name: 'a.md', data: '# a' }, { name: 'big.md', data: 'y'.repeat(5000) }]));
  const res2 = await runSource(new UploadSource({ maxFileBytes: 1000 }), { path: honest });
  assert.deepEqual(res2.documents.map((d) => d.path), ['a.md']);
  assert.ok(res2.logs.some((l) => l.level === 'warn' && l.message.includes('big.md')));
});

test('maxBytes: a tar.gz over the limit is too_large, and so is a gzip bomb in a non-documentation entry', async (t) => {
  const docs: TarEntryInput[] = ['a', 'b', 'c'].map((n) => ({ name: `r/${n}.md`, data: n.repeat(600) }));
  await rejectsWith(runSource(new UploadSource({ maxBytes: 1000 }), { path: await put(t, 'x.tgz', buildTarGz(docs)) }), 'too_large', ['maxBytes=1000']);

  const bomb = buildTarGz([{ name: 'r/a.md', data: '# a' }, { name: 'r/blob.bin', data: Buffer.alloc(20 * MiB) }]);
  assert.ok(bomb.length < 100 * 1024);
  const err = await rejectsWith(runSource(new UploadSource({ maxBytes: MiB }), { path: await put(t, 'bomb.tgz', bomb) }), 'too_large', [`maxBytes=${MiB}`]);
  assert.match(err.message, /expands to more than/);
  // With room for it, the blob is streamed through and ignored.
  const ok = await runSource(new UploadSource({ maxBytes: 10 * MiB }), { path: await put(t, 'ok.tgz', bomb) });
  assert.deepEqual(ok.documents.map((d) => d.path), ['a.md']);
});

test('maxArchiveEntries: entries of any kind count, in zip and tar', async (t) => {
  const entries = [
    { name: 'd/', unixMode: 0o040755 },
    ...Array.from({ length: 6 }, (_, i) => ({ name: `d/${i}.png`, data: 'x' })),
  ];
  const msg = 'Upload too large: the archive has more than 5 entries (limit maxArchiveEntries=5)';
  await rejectsWith(runSource(new UploadSource({ maxArchiveEntries: 5 }), { path: await put(t, 'x.zip', buildZip(entries)) }), 'too_large', [msg]);
  const tar: TarEntryInput[] = [{ name: 'd/', type: '5' }, ...Array.from({ length: 6 }, (_, i) => ({ name: `d/${i}.png`, data: 'x' }))];
  await rejectsWith(runSource(new UploadSource({ maxArchiveEntries: 5 }), { path: await put(t, 'x.tgz', buildTarGz(tar)) }), 'too_large', [msg]);
  const ok = await runSource(new UploadSource({ maxArchiveEntries: 8 }), { path: await put(t, 'ok.tgz', buildTarGz([...tar, { name: 'd/a.md', data: '# a' }])) });
  assert.equal(ok.documents.length, 1);
});
