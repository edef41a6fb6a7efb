/**
 * What the /libraries page's live updates cost: the page polls its table fragment every few
 * seconds while a build runs (server/ui/pages/libraries.ts). This times that fragment against
 * GET /api/libraries (the same list as JSON) and against following jobs by the jobs API's event
 * streams (GET /api/jobs/{id}/events: one stream per job, so a list would need one per running
 * library; browsers open at most 6 HTTP/1.1 connections per origin).
 *
 *   npx tsx scripts/bench-ui-list.ts [libraries=100] [rounds=40]
 *
 * Timings on a shared machine are noisy: compare within one run.
 */
import { performance } from 'node:perf_hooks';
import { call, indexUpload, startApiServer, writeDocs } from '../test/server/helpers/api-server.ts';

const libraries = Number(process.argv[2] ?? 100);
const rounds = Number(process.argv[3] ?? 40);

const s = await startApiServer();
try {
  for (let i = 0; i < libraries; i++) {
    await indexUpload(s.kernel, `lib-${i}`, writeDocs(s.scratch, `lib-${i}`, { 'a.md': `# Library ${i}\n\nSome text about widget ${i}.\n\n## More\n\nMore text.\n` }), { title: `Library ${i}` });
  }
  const first = await call(s.base, 'POST', '/api/auth/login', { json: { username: 'admin', password: 'refdesk' } });
  const cookie = first.headers.getSetCookie()[0].split(';')[0];
  await call(s.base, 'POST', '/api/auth/credentials', { json: { currentPassword: 'refdesk', newUsername: 'operator', newPassword: 'bench-password-0123456789' }, headers: { cookie, 'x-csrf-token': first.body.csrfToken } });

  const time = async (label: string, run: () => Promise<number>) => {
    const ms: number[] = [];
    let bytes = 0;
    for (let i = 0; i < rounds; i++) {
      const t = performance.now();
      bytes = await run();
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    console.log(`${label.padEnd(52)} median ${ms[Math.floor(ms.length / 2)].toFixed(1).padStart(6)} ms  p90 ${ms[Math.floor(ms.length * 0.9)].toFixed(1).padStart(6)} ms  ${(bytes / 1024).toFixed(1).padStart(7)} KiB`);
  };
  const get = (path: string, headers: Record<string, string> = {}) => async () => {
    const r = await fetch(s.base + path, { headers: { cookie, ...headers } });
    return (await r.arrayBuffer()).byteLength;
  };
  console.log(`${libraries} libraries, ${rounds} rounds each`);
  await time('GET /libraries (htmx table fragment, one poll)', get('/libraries', { 'hx-request': 'true' }));
  await time('GET /libraries (whole page)', get('/libraries'));
  await time('GET /api/libraries (JSON)', get('/api/libraries'));
  const jobs = (await call(s.base, 'GET', '/api/jobs?limit=10', { headers: { cookie } })).body.jobs as Array<{ id: string }>;
  await time(`GET /api/jobs/{id}/events x${jobs.length} (ended jobs, replay to end)`, async () => {
    let total = 0;
    await Promise.all(jobs.map(async (j) => (total += (await (await fetch(`${s.base}/api/jobs/${j.id}/events`, { headers: { cookie } })).arrayBuffer()).byteLength)));
    return total;
  });
} finally {
  await s.close();
}
