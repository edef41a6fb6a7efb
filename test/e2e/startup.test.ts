/**
 * Start-up failures through real processes, for both entry points (`refdesk serve|add|demo` and
 * `npm start`, i.e. server/main.ts): exit code 1, one line on stderr naming the cause and what to
 * do, no stack trace. And the address the server binds (HOST) is the one it reports.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { connect } from 'node:net';
import { spawnSync } from 'node:child_process';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { BIN, ROOT, makeDataDir, removeDataDir, runRefdesk, startServer, stopAll, type CliResult, type SpawnOptions } from './refdesk-process.ts';

/** `refdesk serve` and `npm start` (server/main.ts). */
const SERVERS: Array<{ name: string; args: string[]; options: SpawnOptions }> = [
  { name: 'refdesk serve', args: ['serve'], options: {} },
  { name: 'npm start', args: [], options: { entry: 'main' } },
];

/** Exit code 1, exactly one line on stderr (`refdesk: ...`) matching `cause`, no stack frames. */
function assertOneLineFailure(r: CliResult, cause: RegExp): void {
  const shown = `exit ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
  assert.equal(r.code, 1, shown);
  const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
  assert.equal(lines.length, 1, `one line on stderr: ${shown}`);
  assert.match(lines[0], /^refdesk: /, shown);
  assert.match(lines[0], cause, shown);
  assert.doesNotMatch(r.stderr, /^\s+at /m, shown);
  assert.doesNotMatch(r.stdout, /Refdesk listening/, shown);
}

let dir: string;
before(() => {
  dir = makeDataDir('refdesk-startup-');
  chmodSync(dir, 0o755); // the unwritable-DATA_DIR case runs a child as another user
});
after(async () => {
  await stopAll();
  removeDataDir(dir);
});

describe('start-up failures: one line, the cause and what to do, exit 1', { timeout: 600_000 }, () => {
  test('the port is in use', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      for (const s of SERVERS) {
        const r = await runRefdesk(s.args, join(dir, 'port-data'), 30_000, { PORT: String(port), HOST: '127.0.0.1' }, s.options);
        assertOneLineFailure(r, new RegExp(`Port ${port} is already in use on 127\\.0\\.0\\.1 .*set PORT to a free port`));
      }
    } finally {
      blocker.close();
    }
  });

  test('DATA_DIR is a file', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a directory\n');
    for (const s of SERVERS) {
      assertOneLineFailure(await runRefdesk(s.args, file, 30_000, {}, s.options), /DATA_DIR .*a-file is a file, not a directory: set DATA_DIR to a directory/);
    }
    assertOneLineFailure(await runRefdesk(['add', join(ROOT, 'docs'), '--name', 'x'], file, 30_000), /DATA_DIR .*a-file is a file, not a directory/);
    assertOneLineFailure(await runRefdesk(['demo'], file, 30_000), /DATA_DIR .*a-file is a file, not a directory/);
    assertOneLineFailure(await runRefdesk(['serve'], join(file, 'below'), 30_000), /DATA_DIR .*a-file\/below is below a file/);
  });

  test('DATA_DIR is not writable', async (t) => {
    const readOnly = join(dir, 'read-only');
    mkdirSync(readOnly);
    chmodSync(readOnly, 0o555);
    // root may write anywhere: run the child as nobody then (which must be able to read the checkout).
    const as: SpawnOptions = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    if (as.uid !== undefined) {
      const probe = spawnSync(process.execPath, ['-e', `require('node:fs').accessSync(${JSON.stringify(BIN)}, 4)`], { uid: as.uid, gid: as.gid, cwd: ROOT });
      if (probe.status !== 0) return t.skip('running as root, and user nobody cannot read the checkout');
    }
    const env = { HOME: '/tmp' };
    for (const s of SERVERS) {
      const r = await runRefdesk(s.args, join(readOnly, 'data'), 30_000, env, { ...s.options, ...as });
      assertOneLineFailure(r, /DATA_DIR .*read-only\/data is not writable by this user: give this user write permission/);
    }
    const r = await runRefdesk(['add', join(ROOT, 'docs'), '--name', 'x'], readOnly, 30_000, env, as);
    assertOneLineFailure(r, /DATA_DIR .*read-only is not writable by this user/);
  });

  test('the config file is missing, a folder, or not valid YAML', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'plugins: [\n  - use: store-embedded\n');
    for (const s of SERVERS) {
      const r = await runRefdesk(s.args, join(dir, 'cfg-data'), 30_000, { REFDESK_CONFIG: bad }, s.options);
      assertOneLineFailure(r, /bad\.yaml: not valid YAML \(line 2: .+\); fix the file or set REFDESK_CONFIG/);
    }
    let r = await runRefdesk(['add', join(ROOT, 'docs'), '--name', 'x'], join(dir, 'cfg-data'), 30_000, { REFDESK_CONFIG: join(dir, 'none.yaml') });
    assertOneLineFailure(r, /none\.yaml: cannot read the configuration file \(it does not exist\): set REFDESK_CONFIG/);
    r = await runRefdesk(['serve'], join(dir, 'cfg-data'), 30_000, { REFDESK_CONFIG: dir });
    assertOneLineFailure(r, /cannot read the configuration file \(it is a directory\)/);
  });

  test('a config copied out of config/ serves with the built-in plugins; a plugin that resolves nowhere is one line', async () => {
    const copied = join(dir, 'copied');
    mkdirSync(copied);
    copyFileSync(join(ROOT, 'config', 'default.yaml'), join(copied, 'refdesk.yaml'));
    const server = await startServer(join(dir, 'copied-data'), 30_000, { REFDESK_CONFIG: join(copied, 'refdesk.yaml') });
    await server.stop();

    writeFileSync(join(copied, 'broken.yaml'), 'plugins:\n  - use: ../plugins/store-nothing/index.ts\n');
    const r = await runRefdesk(['serve'], join(dir, 'copied-data'), 30_000, { REFDESK_CONFIG: join(copied, 'broken.yaml') });
    assertOneLineFailure(r, /broken\.yaml: plugins\[0\] \(\.\.\/plugins\/store-nothing\/index\.ts\): module not found: .*no built-in plugin "store-nothing"/);
  });

  test('the data directory is locked by a running server', async () => {
    const data = join(dir, 'locked-data');
    const server = await startServer(data);
    try {
      for (const s of SERVERS) {
        const r = await runRefdesk(s.args, data, 30_000, {}, s.options);
        assertOneLineFailure(r, new RegExp(`in use by a running refdesk server \\(pid ${server.pid}, port ${server.port}.*Stop that server first`));
      }
      assertOneLineFailure(await runRefdesk(['demo'], data, 30_000), new RegExp(`pid ${server.pid}\\) already uses`));
    } finally {
      await server.stop();
    }
  });

  test('bad PORT, HOST and LOG_FORMAT values', async () => {
    const data = join(dir, 'env-data');
    assertOneLineFailure(await runRefdesk(['serve'], data, 30_000, { PORT: '70000' }), /PORT must be a number from 0 to 65535/);
    assertOneLineFailure(await runRefdesk([], data, 30_000, { PORT: 'x' }, { entry: 'main' }), /PORT must be a number/);
    assertOneLineFailure(await runRefdesk(['serve'], data, 30_000, { HOST: 'http://x/' }), /HOST must be a host name or an IP address/);
    assertOneLineFailure(await runRefdesk(['serve'], data, 30_000, { HOST: '192.0.2.250' }), /HOST 192\.0\.2\.250 is not an address of this machine/);
    assertOneLineFailure(await runRefdesk(['add', 'x'], data, 30_000, { LOG_FORMAT: 'xml' }), /LOG_FORMAT must be json or text/);
  });
});

/** A non-loopback IPv4 address of this machine, if it has one. */
function externalIPv4(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

/** True when a TCP connection to host:port is accepted. */
function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port, timeout: 5000 });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
}

describe('HOST: the server binds where it says', { timeout: 300_000 }, () => {
  const external = externalIPv4();

  test('default: 127.0.0.1 only, and the log says so', async () => {
    const server = await startServer(join(dir, 'host-default'), 30_000, { HOST: '', LOG_LEVEL: 'info', LOG_FORMAT: 'json' });
    try {
      assert.match(server.stdout(), new RegExp(`Refdesk listening on port ${server.port} \\(http://127\\.0\\.0\\.1:${server.port}, data: `));
      const line = server.stderr().split('\n').map((l) => (l.startsWith('{') ? JSON.parse(l) : null)).find((j) => j?.message?.startsWith('Refdesk listening'));
      assert.ok(line, server.stderr());
      assert.equal(line.message, `Refdesk listening on http://127.0.0.1:${server.port}`);
      assert.equal(line.host, '127.0.0.1');
      assert.equal(await canConnect('127.0.0.1', server.port), true);
      if (external) assert.equal(await canConnect(external, server.port), false, `not reachable on ${external}`);
    } finally {
      await server.stop();
    }
  });

  test('HOST=0.0.0.0: every interface, and the log says 0.0.0.0', async () => {
    const server = await startServer(join(dir, 'host-all'), 30_000, { HOST: '0.0.0.0', LOG_LEVEL: 'info', LOG_FORMAT: 'json' });
    try {
      assert.match(server.stdout(), new RegExp(`Refdesk listening on port ${server.port} \\(http://0\\.0\\.0\\.0:${server.port} \\(every interface\\), data: `));
      assert.match(server.stderr(), new RegExp(`"message":"Refdesk listening on http://0\\.0\\.0\\.0:${server.port} \\(every interface\\)","host":"0\\.0\\.0\\.0"`));
      assert.equal(await canConnect('127.0.0.1', server.port), true);
      if (external) assert.equal(await canConnect(external, server.port), true, `reachable on ${external}`);
    } finally {
      await server.stop();
    }
  });
});
