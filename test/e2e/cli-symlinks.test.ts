/**
 * A folder with symbolic links is indexed alike whether `refdesk add` reads it itself (no server
 * running) or packs it and sends it to a running server: one rule (core/folder-walk.ts) for both.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createKernel } from '../../core/kernel.ts';
import { createConsoleLogger } from '../../core/services.ts';
import { ROOT, makeDataDir, removeDataDir, runRefdesk, startServer, stopAll } from './refdesk-process.ts';

const dirs: string[] = [];
after(async () => {
  await stopAll();
  for (const d of dirs) removeDataDir(d);
});

/** The tree: real files, links inside (file, folder, chained, relative), links outside, broken, looping. */
function linkTree(): string {
  const base = mkdtempSync(join(tmpdir(), 'refdesk-links-'));
  dirs.push(base);
  const write = (p: string, text: string) => {
    mkdirSync(dirname(join(base, p)), { recursive: true });
    writeFileSync(join(base, p), text);
  };
  write('outside/secret.md', '# Secret\n\nThe outside secret says `leakedOutsideFile()`.\n');
  write('outside/more/leak.md', '# Leak\n\nThe outside folder says `leakedOutsideFolder()`.\n');
  write('docs/guide/intro.md', '# Intro\n\nStart with `guideIntro()`.\n');
  write('docs/v2/api.md', '# API\n\nCall `versionTwoApi()`.\n');
  const root = join(base, 'docs');
  symlinkSync('guide/intro.md', join(root, 'start.md')); // file link inside
  symlinkSync('v2', join(root, 'latest')); // folder link inside
  symlinkSync(join(root, 'latest'), join(root, 'current')); // a link to a link inside
  symlinkSync('../../outside/secret.md', join(root, 'guide/secret.md')); // file link outside
  symlinkSync(join(base, 'outside/more'), join(root, 'more')); // folder link outside
  symlinkSync('missing.md', join(root, 'broken.md')); // broken
  symlinkSync('..', join(root, 'guide/up')); // loops back to the root
  return root;
}

async function indexedPaths(dataDir: string): Promise<string[]> {
  const kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), { env: { dataDir, mode: 'reader' }, logger: createConsoleLogger('error', () => {}) });
  await kernel.open();
  try {
    return [...(await kernel.store.getDocuments('/docs/linked', '')).keys()].sort();
  } finally {
    await kernel.close();
  }
}

test('refdesk add of a folder with symlinks: the same files offline and through a running server; escaping, broken and looping links reported', { timeout: 180_000 }, async () => {
  const root = linkTree();
  const expected = ['current/api.md', 'guide/intro.md', 'latest/api.md', 'start.md', 'v2/api.md'];

  const direct = makeDataDir();
  dirs.push(direct);
  const offline = await runRefdesk(['add', root, '--name', 'linked'], direct, 120_000);
  assert.equal(offline.code, 0, offline.stderr);
  assert.match(offline.stdout, /^\/docs\/linked: 5 files/m, offline.stdout);

  const served = makeDataDir();
  dirs.push(served);
  const server = await startServer(served, 30_000);
  const viaServer = await runRefdesk(['add', root, '--name', 'linked'], served, 120_000);
  assert.equal(viaServer.code, 0, viaServer.stderr);
  assert.match(viaServer.stderr, /sending the documents to it/);
  assert.match(viaServer.stdout, /^\/docs\/linked: 5 files/m, viaServer.stdout);
  // The CLI reports what it left out of the upload.
  for (const [path, why] of [
    ['guide/secret.md', 'outside the folder'],
    ['more', 'outside the folder'],
    ['broken.md', 'broken symbolic link'],
    ['guide/up', 'loops back'],
  ]) {
    assert.ok(viaServer.stderr.includes(`Skipped ${path}: `) && viaServer.stderr.includes(why), `${path}: ${viaServer.stderr}`);
  }
  const res = await fetch(`${server.base}/api/v2/context?libraryId=/docs/linked&query=versionTwoApi`);
  assert.equal(res.status, 200);
  await server.stop();

  assert.deepEqual(await indexedPaths(direct), expected);
  assert.deepEqual(await indexedPaths(served), expected);
});
