import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readdirOrEmpty, unlinkIfPresent } from '../../core/missing-files.ts';

test('readdirOrEmpty: the names of a folder, none for a missing one, other failures thrown', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-missing-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'a.txt'), 'a');
  mkdirSync(join(dir, 'sub'));
  assert.deepEqual((await readdirOrEmpty(dir)).sort(), ['a.txt', 'sub']);
  assert.deepEqual(await readdirOrEmpty(join(dir, 'nothing')), []);
  // A file where a folder is expected is not "missing": the caller hears of it.
  await assert.rejects(readdirOrEmpty(join(dir, 'a.txt')), { code: 'ENOTDIR' });
});

test('unlinkIfPresent: true when removed, false when already gone, other failures thrown', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-missing-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'f');
  writeFileSync(file, 'x');
  assert.equal(await unlinkIfPresent(file), true);
  assert.equal(existsSync(file), false);
  assert.equal(await unlinkIfPresent(file), false);
  mkdirSync(join(dir, 'sub'));
  await assert.rejects(unlinkIfPresent(join(dir, 'sub')), (e: NodeJS.ErrnoException) => e.code === 'EISDIR' || e.code === 'EPERM');
});
