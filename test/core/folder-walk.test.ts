import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { walkFolder } from '../../core/folder-walk.ts';

test('walkFolder: links inside followed (files and folders), outside/broken/looping links and special files skipped with a reason', async (t) => {
  const base = mkdtempSync(join(tmpdir(), 'refdesk-walk-'));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const root = join(base, 'root');
  mkdirSync(join(root, 'a/b'), { recursive: true });
  mkdirSync(join(base, 'out'));
  writeFileSync(join(root, 'a/b/x.md'), 'x');
  writeFileSync(join(base, 'out/y.md'), 'y');
  symlinkSync('a/b', join(root, 'ab'));
  symlinkSync('../..', join(root, 'a/b/up')); // the root: loops
  symlinkSync('../out', join(root, 'out'));
  symlinkSync('nowhere', join(root, 'gone'));
  execFileSync('mkfifo', [join(root, 'pipe')]);
  const skipped: string[] = [];
  const files: string[] = [];
  for await (const f of walkFolder(root, { onSkip: (p, why) => skipped.push(`${p}: ${why}`) })) files.push(f.path);
  assert.deepEqual(files, ['a/b/x.md', 'ab/x.md']);
  assert.deepEqual(skipped.sort(), [
    'a/b/up: it is a symbolic link that loops back to a folder above it',
    'ab/up: it is a symbolic link that loops back to a folder above it',
    'gone: it is a broken symbolic link (its target does not exist)',
    'out: it is a symbolic link to a place outside the folder',
    'pipe: it is a special file (socket, FIFO or device)',
  ]);
});
