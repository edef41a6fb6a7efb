/**
 * `restoreBackup` checks an archive before it touches the data directory: entries a Refdesk
 * backup never holds (other paths, links, a database the manifest does not name, an unknown
 * format) are refused and nothing is restored.
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create as createTar } from 'tar';
import { restoreBackup, BACKUP_MANIFEST } from '../../server/backup.ts';
import { isRefdeskError } from '../../core/errors.ts';

const dirs: string[] = [];
const tmp = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  dirs.push(d);
  return d;
};

function manifest(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ format: 1, createdAt: '2026-11-25T00:00:00.000Z', kernel: '1.0.0', database: 'refdesk.sqlite', files: ['refdesk.sqlite'], includesSecretKey: false, dataDir: '/data', ...extra });
}

/** A .tar.gz of `files` (path -> content, or {link} for a symbolic link). */
async function archive(files: Record<string, string | { link: string }>): Promise<string> {
  const src = tmp('refdesk-bk-src-');
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(join(src, p, '..'), { recursive: true });
    if (typeof c === 'string') writeFileSync(join(src, p), c);
    else symlinkSync(c.link, join(src, p));
  }
  const file = join(tmp('refdesk-bk-out-'), 'b.tar.gz');
  await createTar({ gzip: true, cwd: src, file, portable: true }, Object.keys(files));
  return file;
}

async function refused(file: string, pattern: RegExp): Promise<void> {
  const data = tmp('refdesk-bk-data-');
  await assert.rejects(restoreBackup(file, data), (e: unknown) => isRefdeskError(e) && e.code === 'invalid_request' && pattern.test(e.message));
  assert.deepEqual(readdirSync(data), [], 'nothing was restored');
}

describe('restoreBackup refuses what is not a Refdesk backup', () => {
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test('a path outside the backup layout', async () => {
    await refused(await archive({ [BACKUP_MANIFEST]: manifest(), 'refdesk.sqlite': 'db', 'etc/cron.d/evil': 'x' }), /holds "etc\/cron\.d\/evil"/);
  });

  test('a symbolic link among the uploads', async () => {
    await refused(await archive({ [BACKUP_MANIFEST]: manifest(), 'refdesk.sqlite': 'db', 'uploads/x.upload': { link: '/etc/passwd' } }), /holds "uploads\/x\.upload"/);
  });

  test('a top-level file the manifest does not name', async () => {
    await refused(await archive({ [BACKUP_MANIFEST]: manifest(), 'refdesk.sqlite': 'db', 'refdesk.lock': '{}' }), /holds "refdesk\.lock", which its manifest does not name/);
  });

  test('no manifest, an unknown format, a missing database', async () => {
    await refused(await archive({ 'refdesk.sqlite': 'db' }), /has no refdesk-backup\.json/);
    await refused(await archive({ [BACKUP_MANIFEST]: manifest({ format: 9 }), 'refdesk.sqlite': 'db' }), /unknown format \(9\)/);
    await refused(await archive({ [BACKUP_MANIFEST]: manifest({ database: '../x' }), 'refdesk.sqlite': 'db' }), /unknown format/);
    await refused(await archive({ [BACKUP_MANIFEST]: manifest() }), /lacks its database file refdesk\.sqlite/);
  });

  test('a well-formed archive is restored, the sealing key with mode 0600', async () => {
    const data = tmp('refdesk-bk-data-');
    const r = await restoreBackup(await archive({ [BACKUP_MANIFEST]: manifest({ includesSecretKey: true }), 'refdesk.sqlite': 'db', 'segments/b1.seg': 's', 'uploads/u.upload': 'u', 'secret.key': 'k' }), data);
    assert.equal(r.secretKeyPresent, true);
    assert.deepEqual(readdirSync(data).sort(), ['refdesk.sqlite', 'secret.key', 'segments', 'uploads']);
    assert.equal(statSync(join(data, 'secret.key')).mode & 0o777, 0o600);
  });
});
