/**
 * `refdesk delete` as a real process: directly on the data directory when no server runs, and
 * through the running server's admin route when one holds it.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { makeDataDir, removeDataDir, runRefdesk, startServer, stopAll, stopProcess, httpGet, type CliResult } from './refdesk-process.ts';

const show = (r: CliResult) => `exit ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;

function docs(root: string, name: string, word: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'guide.md'), `# ${name}\n\n## ${word}\n\nCall \`${name}.${word}()\` to ${word} the widget.\n`);
  return dir;
}

describe('refdesk delete', { timeout: 900_000 }, () => {
  let dir: string;
  let files: string;
  before(() => {
    dir = makeDataDir();
    files = makeDataDir('refdesk-e2e-files-');
  });
  after(async () => {
    await stopAll();
    removeDataDir(dir);
    removeDataDir(files);
  });

  test('without a server: deletes a library; an unknown ID exits 1 and says so', async () => {
    const add = await runRefdesk(['add', docs(files, 'alpha', 'spin'), '--name', 'alpha'], dir, 120_000);
    assert.equal(add.code, 0, show(add));
    const keep = await runRefdesk(['add', docs(files, 'beta', 'fold'), '--name', 'beta'], dir, 120_000);
    assert.equal(keep.code, 0, show(keep));

    const del = await runRefdesk(['delete', '/docs/alpha'], dir, 120_000);
    assert.equal(del.code, 0, show(del));
    assert.match(del.stdout, /Deleted \/docs\/alpha/);
    const libs = await runRefdesk(['libraries'], dir, 120_000);
    assert.doesNotMatch(libs.stdout, /\/docs\/alpha/);
    assert.match(libs.stdout, /\/docs\/beta/);
    const jobs = await runRefdesk(['jobs', '/docs/alpha'], dir, 120_000);
    assert.match(jobs.stdout, /No jobs/);

    const again = await runRefdesk(['delete', '/docs/alpha'], dir, 120_000);
    assert.equal(again.code, 1, show(again));
    assert.match(again.stderr, /Library "\/docs\/alpha" not found/);
    const none = await runRefdesk(['delete'], dir, 120_000);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /delete: give one library ID/);
  });

  test('with a server: delete goes through its admin route; an uploaded library leaves no upload behind', async () => {
    const server = await startServer(dir, 120_000);
    try {
      const add = await runRefdesk(['add', docs(files, 'gamma', 'twist'), '--name', 'gamma'], dir, 120_000);
      assert.equal(add.code, 0, show(add));
      assert.match(add.stderr, /sending the documents to it/);
      assert.equal((await httpGet(`${server.base}/api/v2/context?libraryId=/docs/gamma&query=twist+the+widget`)).status, 200);

      const del = await runRefdesk(['delete', '/docs/gamma'], dir, 120_000);
      assert.equal(del.code, 0, show(del));
      assert.match(del.stdout, /Deleted \/docs\/gamma/);
      assert.equal((await httpGet(`${server.base}/api/v2/context?libraryId=/docs/gamma&query=twist`)).status, 404);
      assert.equal((await httpGet(`${server.base}/api/v2/context?libraryId=/docs/beta&query=fold`)).status, 200, 'other libraries stay');
      const uploads = join(dir, 'uploads');
      assert.deepEqual(existsSync(uploads) ? readdirSync(uploads) : [], []);

      const missing = await runRefdesk(['delete', '/docs/gamma@v1'], dir, 120_000);
      assert.equal(missing.code, 1, show(missing));
      assert.match(missing.stderr, /not found/);
    } finally {
      await stopProcess(server.child);
    }
  });
});
