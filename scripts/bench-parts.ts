/**
 * Pieces the serving benchmark (scripts/bench-serve.ts) and the cluster benchmark
 * (scripts/bench-cluster.ts) share: statistics, the load average, a process's CPU time and
 * memory, timed requests, a fixed-time load generator, a bare Koa server for comparison, and
 * questions made from a corpus's headings.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';

export const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
/** The load averages (1, 5, 15 min): every timing is reported beside them. */
export const load = () => loadavg().map((x) => Math.round(x * 100) / 100);

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

export const stats = (xs: number[]) => ({ n: xs.length, p50: round(percentile(xs, 50), 2), p99: round(percentile(xs, 99), 2), max: round(Math.max(...xs), 2) });

/** Every heading of a corpus, with its file's name, as questions (distinct, in a fixed shuffled order). */
export function headingQuestions(corporaDir: string, corpus: string): string[] {
  const out = new Set<string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(md|mdx|txt|rst)$/.test(e.name)) {
        const stem = e.name.replace(/\.[^.]+$/, '').replace(/[-_~.]+/g, ' ');
        for (const m of readFileSync(p, 'utf8').matchAll(/^#{1,4}\s+(.{3,80})$/gm)) {
          const h = m[1].replace(/\{#[^}]*\}|[`*_[\]()<>{}]/g, ' ').replace(/\s+/g, ' ').trim();
          if (h.split(' ').length >= 1 && /[a-z]/i.test(h)) out.add(`${h} ${stem}`.toLowerCase().slice(0, 200));
        }
      }
    }
  };
  walk(join(corporaDir, corpus));
  // A fixed shuffle, so consecutive requests do not ask about the same page.
  const xs = [...out];
  let seed = 17;
  for (let i = xs.length - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const j = seed % (i + 1);
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs;
}

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** CPU time of a process so far (Linux /proc; clock ticks of 10 ms). Unlike wall time, it hardly depends on the machine's load. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return round(kb / 1024);
}

export async function timed(url: string, headers: Record<string, string>): Promise<{ ms: number; status: number; bytes: number; body: Buffer; type: string }> {
  const t0 = performance.now();
  const res = await fetch(url, { headers });
  const body = Buffer.from(await res.arrayBuffer());
  return { ms: performance.now() - t0, status: res.status, bytes: body.length, body, type: res.headers.get('content-type') ?? '' };
}

/** Runs `concurrency` workers for `seconds`; each takes the next URL. */
export async function hammer(concurrency: number, seconds: number, nextUrl: () => string, headers: Record<string, string> = {}) {
  const until = performance.now() + seconds * 1000;
  const lat: number[] = [];
  let errors = 0;
  const statuses: Record<string, number> = {};
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        try {
          const r = await timed(nextUrl(), headers);
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
          if (r.status !== 200) errors++;
          lat.push(r.ms);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  return { requests: lat.length, errors, statuses, rps: round(lat.length / elapsed), latencyMs: stats(lat) };
}

/** A bare Koa server in this process answering every request with a real answer's bytes from memory (the ceiling to compare with). */
export async function startBareKoa(sample: { body: Buffer; type: string }): Promise<{ base: string; close(): Promise<void> }> {
  const bare = new Koa();
  bare.use((ctx) => {
    ctx.type = sample.type;
    ctx.body = sample.body;
  });
  const server: Server = createServer(bare.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}
