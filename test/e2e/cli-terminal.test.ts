/**
 * `refdesk add` output on a real pseudo-terminal (util-linux `script`, from Debian's essential
 * bsdutils package) and through a pipe: readable warnings above the progress line and a summary of
 * skipped files on a terminal; JSON log lines through a pipe or with LOG_FORMAT=json.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { terminalRows } from '../helpers/terminal-rows.ts';
import { BIN, ROOT, cliEnv, makeDataDir, removeDataDir, runRefdesk, withTimeout } from './refdesk-process.ts';

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
const SKIP = hasScript ? {} : { skip: 'the script command (util-linux) is not installed' };

/** Rows of a terminal after the output (\r, \n, ESC[K interpreted; other escapes dropped). */
const screen = (raw: string): string[] => terminalRows(raw);

/** Runs `refdesk <args>` under a pseudo-terminal; resolves with everything it showed. */
function runOnTerminal(args: string[], dataDir: string, extraEnv: Record<string, string> = {}): Promise<{ code: number | null; raw: string }> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, BIN, ...args].map(quote).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: cliEnv(dataDir, extraEnv), stdio: ['ignore', 'pipe', 'pipe'] });
  let raw = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (raw += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (raw += c));
  const done = new Promise<{ code: number | null; raw: string }>((resolve) => child.once('close', (code) => resolve({ code, raw })));
  return withTimeout(done, 120_000, () => `refdesk ${args.join(' ')} on a terminal did not end:\n${raw}`).catch((e) => {
    child.kill('SIGKILL');
    throw e;
  });
}

let dir: string;
let docs: string;

before(() => {
  dir = makeDataDir('refdesk-terminal-');
  docs = join(dir, 'docs');
  mkdirSync(docs);
  // Five pages whose FastAPI-style includes point at files that are not in the folder (as in the
  // fastapi corpus, whose docs_src is not part of it), and a symlink out of the folder.
  for (let i = 1; i <= 5; i++) {
    writeFileSync(join(docs, `page${i}.md`), `# Page ${i}\n\nHow to use part ${i}.\n\n{* ../src/tutorial00${i}.py *}\n\n## Details\n\nMore about part ${i}.\n`);
  }
  writeFileSync(join(dir, 'outside.md'), '# Outside\n\nNot part of the upload.\n');
  symlinkSync(join(dir, 'outside.md'), join(docs, 'outside.md'));
});

after(() => removeDataDir(dir));

describe('refdesk add on a terminal', { ...SKIP, timeout: 300_000 }, () => {
  test('readable warnings above the progress line, then a summary of what was skipped', async () => {
    const r = await runOnTerminal(['add', docs, '--name', 'tty'], join(dir, 'tty-data'), { LOG_FORMAT: '' });
    const rows = screen(r.raw);
    const shown = rows.join('\n');
    assert.equal(r.code, 0, shown);
    assert.doesNotMatch(r.raw, /\{"at":/, `no JSON lines on a terminal:\n${shown}`);
    const warnings = rows.filter((l) => l.startsWith('warning: '));
    assert.equal(warnings.length, 6, shown);
    assert.ok(warnings.some((l) => l.startsWith('warning: Skipped outside.md: it is a symbolic link to a place outside the folder')), shown);
    assert.ok(warnings.some((l) => l.startsWith('warning: page3.md: an include directive was left as written')), shown);
    // No row holds a warning and progress together (the progress line was cleared first).
    for (const row of rows) assert.ok(!(row.includes('warning:') && /\d+ files, \d+ snippets/.test(row)), `mixed row: ${row}`);
    // Warnings and progress fit one row (the terminal size is unknown under script: 100 columns).
    assert.ok(rows.filter((l) => l.startsWith('warning: ') || / files, /.test(l)).every((l) => l.length <= 100), shown);
    const summary = rows.indexOf('Skipped 1 file:');
    assert.ok(summary > 0, shown);
    assert.equal(rows[summary + 1], '  1 symlink out of the folder: outside.md');
    assert.equal(rows[summary + 2], '5 files with include directives left as written (targets not in the source): page1.md, page2.md, page3.md and 2 more');
    assert.match(rows[summary - 1], /^ {2}5 files, \d+ snippets, [\d.]+ s$/, 'the last progress line stays above the summary');
    assert.match(shown, /\/docs\/tty: 5 files, \d+ snippets/);
  });

  test('LOG_FORMAT=json: JSON lines even on a terminal, each on its own row', async () => {
    const r = await runOnTerminal(['add', docs, '--name', 'ttyjson'], join(dir, 'tty-json-data'), { LOG_FORMAT: 'json' });
    const rows = screen(r.raw);
    assert.equal(r.code, 0, rows.join('\n'));
    const json = rows.filter((l) => l.startsWith('{'));
    assert.equal(json.length, 6, rows.join('\n'));
    for (const l of json) assert.equal(JSON.parse(l).level, 'warn');
    assert.ok(!rows.includes('Skipped 1 file:'), 'no text summary with JSON logs');
  });
});

describe('refdesk add through a pipe', { timeout: 120_000 }, () => {
  test('warnings are JSON lines; no terminal control characters and no summary', async () => {
    const r = await runRefdesk(['add', docs, '--name', 'piped'], join(dir, 'pipe-data'), 60_000, { LOG_FORMAT: '' });
    assert.equal(r.code, 0, r.stderr);
    const json = r.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    assert.equal(json.length, 6, r.stderr);
    assert.ok(json.every((j) => j.level === 'warn' && typeof j.job === 'string' && j.library === '/docs/piped'));
    assert.ok(json.some((j) => j.message === 'Skipped outside.md: it is a symbolic link to a place outside the folder'));
    assert.doesNotMatch(r.stderr, /\r|\x1b/);
    assert.doesNotMatch(r.stderr, /^warning: |Skipped 1 file:/m);
  });
});

describe('refdesk add through a running server', { timeout: 120_000 }, () => {
  test('a poll whose connection the busy server drops is asked again; the job log\'s warnings are relayed', async () => {
    // A server shaped like Refdesk's admin routes (POST /api/admin/upload, GET /api/admin/jobs/:id),
    // found by the CLI through the data directory's lock file, which names this live process.
    let polls = 0;
    const jobId = '0b5f3c1e-1111-4222-8333-444455556666';
    const server = createHttpServer((req, res) => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      // The CLI authenticates with the local admin token the server wrote to DATA_DIR/cli-token.
      if (req.headers.authorization !== 'Bearer rdcli_relay-test-token') return send(401, { error: 'unauthorized', message: 'no admin credentials' });
      if (req.method === 'POST' && req.url?.startsWith('/api/admin/upload?')) {
        req.resume();
        req.on('end', () => send(202, { libraryName: '/docs/relayed', jobId, message: `Queued ingest of /docs/relayed (job ${jobId}).` }));
        return;
      }
      if (req.method === 'GET' && req.url === `/api/admin/jobs/${jobId}`) {
        polls++;
        if (polls === 1) return req.socket.destroy(); // as a server whose event loop was blocked past its keep-alive timeout
        const done = polls >= 3;
        const job = { id: jobId, state: done ? 'succeeded' : 'running', progress: { files: done ? 5 : 2, snippets: done ? 10 : 4 }, error: null, startedAt: new Date().toISOString() };
        const log = [
          { seq: 1, at: job.startedAt, level: 'info', message: 'started: reading upload source for /docs/relayed' },
          { seq: 2, at: job.startedAt, level: 'warn', message: 'Skipped symlink outside.md: it points outside the upload folder' },
        ];
        return send(200, { job, log });
      }
      send(404, { error: 'not_found', message: `No route for ${req.method} ${req.url}` });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const data = join(dir, 'relay-data');
    mkdirSync(data);
    writeFileSync(join(data, 'refdesk.lock'), JSON.stringify({ pid: process.pid, mode: 'server', port, startedAt: new Date().toISOString() }) + '\n');
    writeFileSync(join(data, 'cli-token'), 'rdcli_relay-test-token\n', { mode: 0o600 });
    try {
      const r = await runRefdesk(['add', docs, '--name', 'relayed'], data, 60_000, { LOG_FORMAT: '' });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(polls >= 3, `polled ${polls} times`);
      assert.match(r.stdout, /^\/docs\/relayed: 5 files, 10 snippets \(finalized\)$/m, r.stderr);
      const warnings = r.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
      assert.deepEqual(warnings.map((w) => [w.level, w.message, w.library]), [['warn', 'Skipped symlink outside.md: it points outside the upload folder', '/docs/relayed']]);
    } finally {
      server.close();
    }
  });
});
