/**
 * `refdesk migrate-store` on bad input (server/cli-migrate-store.ts, in process): every mistake is
 * one line on stderr and exit 1, and nothing quotes a database password or a key.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMigrateStoreCommand } from '../../server/cli-migrate-store.ts';
import { EmbeddedStore } from '../../plugins/store-embedded/embedded-store.ts';
import { createConsoleLogger, systemClock } from '../../core/services.ts';

const PASSWORD = 'pw-Zq81secret';

async function run(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runMigrateStoreCommand(argv, env, { write: (s: string) => (out += s) }, { write: (s: string) => (err += s) });
  return { code, out, err };
}

describe('refdesk migrate-store: bad input', () => {
  let dir: string;
  let source: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'refdesk-migrate-cli-'));
    source = join(dir, 'data');
    const store = new EmbeddedStore({}, { env: { dataDir: source, mode: 'writer' }, logger: createConsoleLogger('error'), clock: systemClock });
    await store.open();
    await store.setSetting('mcp.requireKey', true);
    await store.close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('--help prints the usage; missing or unknown options are refused with it', async () => {
    const help = await run(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.out, /Usage: refdesk migrate-store --from/);
    for (const argv of [[], ['--from', source], ['--to', join(dir, 'x')], ['--from', source, '--to', join(dir, 'x'), '--bogus']]) {
      const r = await run(argv);
      assert.equal(r.code, 1, argv.join(' '));
      assert.match(r.err, /Usage: refdesk migrate-store/);
    }
  });

  test('the same directory at both ends, and a source that is no data directory, are refused', async () => {
    const same = await run(['--from', source, '--to', `${source}/`]);
    assert.equal(same.code, 1);
    assert.match(same.err, /same data directory/);
    const none = await run(['--from', join(dir, 'nothing-here'), '--to', join(dir, 'target')]);
    assert.equal(none.code, 1);
    assert.match(none.err, /no Refdesk data directory there/);
  });

  test('a database end: ENCRYPTION_KEY required and checked, a bad or unreachable URL named without its password', async () => {
    const url = `postgres://refdesk:${PASSWORD}@127.0.0.1:1/refdesk`;
    const noKey = await run(['--from', source, '--to', url]);
    assert.equal(noKey.code, 1);
    assert.match(noKey.err, /ENCRYPTION_KEY is not set/);

    const badKey = await run(['--from', source, '--to', url], { ENCRYPTION_KEY: 'not-a-key-' + PASSWORD });
    assert.equal(badKey.code, 1);
    assert.match(badKey.err, /ENCRYPTION_KEY must be 32 bytes/);

    const key = Buffer.alloc(32, 7).toString('base64');
    const noHost = await run(['--from', source, '--to', `postgres://refdesk:${PASSWORD}@/refdesk`], { ENCRYPTION_KEY: key });
    assert.equal(noHost.code, 1);
    assert.match(noHost.err, /DATABASE_URL is not a URL/);

    const refused = await run(['--from', source, '--to', url], { ENCRYPTION_KEY: key });
    assert.equal(refused.code, 1);
    assert.match(refused.err, /Cannot reach PostgreSQL at 127\.0\.0\.1:1\/refdesk/);
    assert.doesNotMatch(refused.err, /half-written/, 'nothing was written');

    for (const r of [noKey, badKey, noHost, refused]) {
      assert.ok(!(r.out + r.err).includes(PASSWORD), 'the password is never printed');
      assert.equal(r.err.trim().split('\n').length, 1, `one line: ${r.err}`);
    }
  });
});
