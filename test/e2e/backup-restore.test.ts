/**
 * `refdesk backup` and `refdesk restore` as real processes: a backup taken through a running
 * server while it ingests a large library restores into an empty data directory, and the
 * restored server answers byte for byte as the original did; the interrupted ingest runs again
 * there and completes (its raw upload is in the backup). The sealing key is left out unless asked.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { list as listTar } from 'tar';
import { makeDataDir, removeDataDir, runRefdesk, spawnRefdesk, startServer, stopAll, httpGet, type CliResult } from './refdesk-process.ts';
import { CORPORA_DIR, hasCorpora } from '../helpers/corpora.ts';

const show = (r: CliResult) => `exit ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
const QUERIES = ['how do I configure the widget', 'rotate the key', 'error handling and retries'];

async function tarEntries(file: string): Promise<string[]> {
  const out: string[] = [];
  await listTar({ file, onReadEntry: (e) => out.push(e.path) });
  return out.sort();
}

async function libraryState(server: { base: string; adminAuth: Record<string, string> }, id: string): Promise<string | null> {
  const r = await httpGet(`${server.base}/api/admin/libraries`, 15_000, server.adminAuth);
  return (r.body.libraries as Array<{ id: string; state: string }>).find((l) => l.id === id)?.state ?? null;
}

async function answers(base: string): Promise<string[]> {
  const out: string[] = [];
  for (const q of QUERIES) {
    const r = await httpGet(`${base}/api/v2/context?libraryId=/docs/one&query=${encodeURIComponent(q)}`);
    assert.equal(r.status, 200, r.text);
    out.push(r.text);
  }
  return out;
}

describe('refdesk backup / restore', { timeout: 900_000, skip: hasCorpora ? false : 'needs ../shared/corpora' }, () => {
  let a: string;
  let b: string;
  let files: string;
  before(() => {
    a = makeDataDir();
    b = makeDataDir();
    files = makeDataDir('refdesk-e2e-files-');
  });
  after(async () => {
    await stopAll();
    for (const d of [a, b, files]) removeDataDir(d);
  });

  test('a backup taken during an ingest restores to a server that answers the same', async () => {
    const one = join(files, 'one');
    mkdirSync(one, { recursive: true });
    writeFileSync(join(one, 'guide.md'), '# One\n\n## Configure the widget\n\nSet `widget.size` in `one.yaml`.\n\n```yaml\nwidget:\n  size: 3\n```\n\n## Rotate the key\n\nRun `one rotate --key NEW` to rotate it.\n');
    writeFileSync(join(one, 'errors.md'), '# Errors\n\n## Error handling\n\nEvery call returns `OneError` on failure.\n\n## Retries\n\nRetries back off exponentially: `one.retry({ attempts: 5 })`.\n');

    // The sealing key a server creates when it first seals a token.
    writeFileSync(join(a, 'secret.key'), randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
    const server = await startServer(a, 120_000);
    const add = await runRefdesk(['add', one, '--name', 'one'], a, 120_000);
    assert.equal(add.code, 0, show(add));
    const before = await answers(server.base);

    // A large ingest, running while the backup is taken.
    const big = spawnRefdesk(['add', join(CORPORA_DIR, 'fastapi'), '--name', 'big'], a);
    const deadline = Date.now() + 120_000;
    while ((await libraryState(server, '/docs/big').catch(() => null)) !== 'processing') {
      assert.ok(Date.now() < deadline, `the big ingest did not start: ${big.stderr()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const out = join(files, 'backup.tar.gz');
    const backup = await runRefdesk(['backup', '--out', out], a, 120_000);
    assert.equal(backup.code, 0, show(backup));
    assert.equal(big.child.exitCode, null, 'the ingest was still running when the backup finished');
    assert.match(backup.stderr, /taking the backup through it/);
    assert.match(backup.stdout, /Backup written to .*backup\.tar\.gz/);
    assert.match(backup.stdout, /secret\.key is not in this backup \(add --include-secret-key/);

    const withKey = join(files, 'backup-key.tar.gz');
    const keyed = await runRefdesk(['backup', '--out', withKey, '--include-secret-key'], a, 120_000);
    assert.equal(keyed.code, 0, show(keyed));
    assert.match(keyed.stdout, /is IN this backup/);
    assert.equal((await tarEntries(withKey)).includes('secret.key'), true);

    const again = await runRefdesk(['backup', '--out', out], a, 60_000);
    assert.equal(again.code, 1, show(again));
    assert.match(again.stderr, /exists; choose another file or add --force/);

    assert.equal((await big.exited(300_000)).code, 0, big.stderr());
    assert.deepEqual(await answers(server.base), before, 'library one did not change during the ingest');
    await server.stop();

    const entries = await tarEntries(out);
    assert.equal(entries.includes('refdesk-backup.json'), true);
    assert.equal(entries.includes('refdesk.sqlite'), true);
    assert.equal(entries.includes('secret.key'), false);
    assert.equal(entries.some((e) => e.startsWith('segments/')), true, entries.join(', '));
    assert.equal(entries.some((e) => e.startsWith('uploads/')), true, 'the raw upload of the running ingest');

    // Not into a non-empty directory (unless --force), nor while a process holds it.
    const refused = await runRefdesk(['restore', '--from', out], a, 60_000);
    assert.equal(refused.code, 1, show(refused));
    assert.match(refused.stderr, /is not empty .* add --force/);

    const restore = await runRefdesk(['restore', '--from', out], b, 120_000);
    assert.equal(restore.code, 0, show(restore));
    assert.match(restore.stdout, /Restored \d+ files \(2 libraries/);
    assert.match(restore.stdout, /holds no sealing key/);

    const restored = await startServer(b, 120_000);
    assert.deepEqual(await answers(restored.base), before, 'same context answer bytes after the restore');
    // The ingest interrupted by the backup runs again on the restored server and completes.
    const until = Date.now() + 300_000;
    let state: string | null = null;
    // A busy server may reset a kept-alive connection: a failed poll is retried.
    while ((state = await libraryState(restored, '/docs/big').catch(() => state)) !== 'finalized') {
      if (Date.now() > until || state === 'error') assert.fail(`big on the restored server: ${state}\n${show(await runRefdesk(['jobs', '/docs/big'], b, 60_000))}\n${restored.stderr()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const held = await runRefdesk(['restore', '--from', out, '--force'], b, 60_000);
    assert.equal(held.code, 1, show(held));
    assert.match(held.stderr, /is using .*: stop it before restoring/);
    await restored.stop();

    const forced = await runRefdesk(['restore', '--from', withKey, '--force'], a, 120_000);
    assert.equal(forced.code, 0, show(forced));
    assert.equal(existsSync(join(a, 'secret.key')), true);
  });

  test('bad input: no --out or --from, a file that is not a backup', async () => {
    const none = await runRefdesk(['backup'], b, 60_000);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /backup: give the file to write/);
    const noFrom = await runRefdesk(['restore'], b, 60_000);
    assert.equal(noFrom.code, 1);
    assert.match(noFrom.stderr, /restore: give the backup to restore/);
    const junk = join(files, 'junk.tar.gz');
    writeFileSync(junk, 'not a tarball at all');
    const empty = makeDataDir();
    try {
      const bad = await runRefdesk(['restore', '--from', junk], empty, 60_000);
      assert.equal(bad.code, 1, show(bad));
      assert.match(bad.stderr, /not a readable \.tar\.gz backup|has no refdesk-backup\.json/);
      const missing = await runRefdesk(['restore', '--from', join(files, 'nope.tar.gz')], empty, 60_000);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /is not a file/);
    } finally {
      removeDataDir(empty);
    }
  });
});
