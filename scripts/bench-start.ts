/**
 * Start to the first answered /ping of `refdesk serve`, and where the time goes (issue 17 item 5):
 * each variant's server is started `--runs` times, variants alternated so that they share the
 * machine's load, and polled on /ping every 3 ms. Per variant it prints the wall time to the first
 * 200 (from the spawn), the process's CPU time by then (all threads, /proc/<pid>/stat), and the
 * medians of the REFDESK_DEBUG_START marks (server/main.ts: wall ms since the process started,
 * CPU ms). Timings depend on the load: the load averages before and after are printed too.
 *
 *   npx tsx scripts/bench-start.ts --data-dir DIR [--runs 7] [label=ENTRY ...]
 *
 * ENTRY is a script node runs with `serve` (default: `refdesk=bin/refdesk.js`); e.g. compare an
 * older build kept elsewhere: `before=.tmp/dist-old/server/cli.js after=dist/server/cli.js`.
 * DIR is a data directory (a `refdesk add` or `bench:serve --keep` filled it); it is only read,
 * but each server takes its lock while it runs. Linux only (/proc).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { throwawayLicenceEnv } from '../server/licence-throwaway.ts';

const { values, positionals } = parseArgs({
  options: { 'data-dir': { type: 'string' }, runs: { type: 'string', default: '7' } },
  allowPositionals: true,
});
if (!values['data-dir']) {
  process.stderr.write('bench-start: --data-dir DIR is required\n');
  process.exit(2);
}
const runs = Number(values.runs);
const variants = (positionals.length ? positionals : ['refdesk=bin/refdesk.js']).map((v) => {
  const i = v.indexOf('=');
  return i > 0 ? { label: v.slice(0, i), entry: resolve(v.slice(i + 1)) } : { label: v, entry: resolve(v) };
});
const env: NodeJS.ProcessEnv = { ...process.env, ...throwawayLicenceEnv('Refdesk start benchmark'), DATA_DIR: resolve(values['data-dir']), HOST: '127.0.0.1', LOG_LEVEL: 'warn', REFDESK_DEBUG_START: '1' };
delete env.NODE_OPTIONS;

const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
/** CPU ms of a process, all threads (utime + stime in clock ticks of 10 ms). */
const cpuOf = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
const ping = (port: number) =>
  new Promise<boolean>((done) => {
    const r = request({ host: '127.0.0.1', port, path: '/ping', agent: false }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode === 200));
    });
    r.on('error', () => done(false));
    r.setTimeout(5000, () => r.destroy());
    r.end();
  });

interface Run {
  wallMs: number;
  cpuMs: number;
  steps: Record<string, { wall: number; cpu: number }>;
}
const results = new Map<string, Run[]>(variants.map((v) => [v.label, []]));
const loadBefore = load();
let port = 20000 + Math.floor(Math.random() * 20000);
for (let i = 0; i < runs; i++) {
  for (const v of variants) {
    port++;
    const t0 = performance.now();
    const child = spawn(process.execPath, [v.entry, 'serve'], { env: { ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    while (!(await ping(port))) {
      if (child.exitCode !== null) throw new Error(`${v.label} exited (${child.exitCode}):\n${stderr}`);
      await new Promise((r) => setTimeout(r, 3));
    }
    const wallMs = performance.now() - t0;
    const cpuMs = cpuOf(child.pid!);
    // Let the start finish (its housekeeping after the answer), then stop it.
    for (let w = 0; w < 200 && !/refdesk-start resumeQueued/.test(stderr); w++) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    const steps: Run['steps'] = {};
    for (const m of stderr.matchAll(/refdesk-start (.+?) wall=([\d.]+) cpu=([\d.]+)/g)) steps[m[1]!] = { wall: Number(m[2]), cpu: Number(m[3]) };
    results.get(v.label)!.push({ wallMs, cpuMs, steps });
  }
}

const median = (xs: number[]) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.floor(s.length / 2)]!) : null;
};
const out = {
  runs,
  load: { before: loadBefore, after: load() },
  variants: Object.fromEntries(
    [...results].map(([label, rs]) => {
      const names = [...new Set(rs.flatMap((r) => Object.keys(r.steps)))];
      return [
        label,
        {
          startToPingMs: { median: median(rs.map((r) => r.wallMs)), min: Math.round(Math.min(...rs.map((r) => r.wallMs))), runs: rs.map((r) => Math.round(r.wallMs)) },
          cpuAtPingMs: { median: median(rs.map((r) => r.cpuMs)), min: Math.min(...rs.map((r) => r.cpuMs)) },
          steps: Object.fromEntries(names.map((n) => [n, { wallMs: median(rs.map((r) => r.steps[n]?.wall ?? NaN)), cpuMs: median(rs.map((r) => r.steps[n]?.cpu ?? NaN)) }])),
        },
      ];
    }),
  ),
};
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
