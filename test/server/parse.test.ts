/**
 * POST /api/parse end to end: a real bare repository served by `git http-backend` behind a
 * loopback HTTP server (parse.allowHttpHosts lists 127.0.0.1), the real git source, the job
 * followed through its Server-Sent Events stream (read with fetch as a stream) until it is
 * finalized, and every address the endpoint must refuse.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { bearer, call, createKey, qs, startApiServer, ROOT, type ApiServer, type Reply } from './helpers/api-server.ts';
import { gitFixture, type GitFixture } from '../plugins/source-git/helpers.ts';

let s: ApiServer;
let expired: ApiServer;
let fx: GitFixture;
let admin: string;
let member: string;

function assertError(r: Reply, status: number, code: string): void {
  assert.equal(r.status, status, r.text);
  assert.equal(r.body?.error, code, r.text);
  assert.equal(typeof r.body?.message, 'string');
}

const parse = (json: unknown, headers: Record<string, string> = {}) => call(s.base, 'POST', '/api/parse', { headers, json });

interface SseEvent {
  event: string;
  id?: string;
  data: any;
}

/** Reads a Server-Sent Events stream to its end, event by event, as a browser's EventSource would. */
async function readEvents(url: string, headers: Record<string, string> = {}): Promise<{ events: SseEvent[]; comments: number }> {
  const res = await fetch(url, { headers });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const events: SseEvent[] = [];
  let comments = 0;
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const e: Partial<SseEvent> & { lines: string[] } = { lines: [] };
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) comments++;
        else if (line.startsWith('event: ')) e.event = line.slice(7);
        else if (line.startsWith('id: ')) e.id = line.slice(4);
        else if (line.startsWith('data: ')) e.lines.push(line.slice(6));
      }
      if (e.event) events.push({ event: e.event, id: e.id, data: JSON.parse(e.lines.join('\n')) });
    }
  }
  return { events, comments };
}

describe('POST /api/parse', () => {
  before(async () => {
    fx = await gitFixture();
    fx.repo('acme/widgets')
      .commit({
        'README.md': '# Widgets\n\nWidgets render dashboards.\n',
        'docs/configure.md': '# Configure\n\n## Set the refresh interval\n\nCall `setRefreshInterval` with milliseconds:\n\n```js\nwidgets.setRefreshInterval(5000);\n```\n',
        'docs/deploy.md': '# Deploy\n\n## Ship it\n\nRun `widgets deploy --prod` to ship the dashboards.\n',
      })
      .publish();
    fx.repo('acme/gadgets').commit({ 'docs/intro.md': '# Gadgets\n\nGadgets start with `gadget.launch()`.\n' }).publish();
    const git = { use: join(ROOT, 'plugins/source-git/index.ts'), options: { git: { retryDelayMs: 5, attempts: 1, statsTimeoutMs: 0 } } };
    s = await startApiServer({ withoutTestSources: true, plugins: [git], config: { parse: { allowHttpHosts: ['127.0.0.1'] } }, app: { jobEvents: { heartbeatMs: 100 } } });
    expired = await startApiServer({ withoutTestSources: true, plugins: [git], app: { access: { licence: { expired: () => true, expiresAt: () => '2020-01-01' } } } });
    admin = await createKey(s.base, { role: 'admin' });
    member = await createKey(s.base, { name: 'member' });
  });
  after(async () => {
    await s?.close();
    await expired?.close();
    await fx?.close();
  });

  test('Off: anonymous 401, member 403; an admin parses a repository over loopback http, followed by SSE until finalized', async () => {
    await s.kernel.store.setSetting('anonymous', {});
    const url = fx.url('acme/widgets');
    assertError(await parse({ url }), 401, 'unauthorized');
    assertError(await parse({ url }, bearer(member)), 403, 'forbidden');
    const r = await parse({ url }, bearer(admin));
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.libraryId, '/acme/widgets');
    assert.equal(r.body.libraryName, '/acme/widgets');
    assert.equal(r.body.state, 'queued');
    assert.match(r.body.statusUrl, new RegExp(`^/api/jobs/${r.body.jobId}\\?token=`));

    const { events } = await readEvents(s.base + r.body.eventsUrl);
    const names = events.map((e) => e.event);
    assert.equal(names[0], 'state');
    const last = events[events.length - 1];
    assert.equal(last.event, 'end', names.join(','));
    assert.equal(last.data.state, 'succeeded', JSON.stringify(last.data));
    assert.equal(last.data.libraryState, 'finalized');
    assert.equal(last.data.libraryId, '/acme/widgets');
    const logs = events.filter((e) => e.event === 'log').map((e) => e.data);
    assert.ok(logs.some((l) => /^finalized: 3 documents/.test(l.message)), JSON.stringify(logs));
    assert.deepEqual(logs.map((l) => l.seq), [...new Set(logs.map((l) => l.seq))].sort((a, b) => a - b));
    for (const e of events.filter((x) => x.event === 'log')) assert.equal(Number(e.id), e.data.seq);

    const ctx = await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: '/acme/widgets', query: 'refresh interval' }));
    assert.equal(ctx.status, 200, ctx.text);
    assert.ok(ctx.text.includes('setRefreshInterval'), ctx.text);
    const job = await call(s.base, 'GET', r.body.statusUrl);
    assert.equal(job.body.state, 'succeeded');
    assert.equal(job.body.progress.documents, 3);
    assert.equal(s.refdesk.jobs.listenerCount(r.body.jobId), 0);
  });

  test('409 with the existing libraryId when the repository is already there', async () => {
    const again = await parse({ url: fx.url('acme/widgets') }, bearer(admin));
    assertError(again, 409, 'already_exists');
    assert.equal(again.body.libraryId, '/acme/widgets');
  });

  test('On: anyone may parse, and follows the job by its statusUrl; an expired licence refuses with 403 license_expired', async () => {
    await s.kernel.store.setSetting('anonymous', { parse: true });
    try {
      const r = await parse({ url: fx.url('acme/gadgets') });
      assert.equal(r.status, 202, r.text);
      await s.refdesk.jobs.idle();
      const st = await call(s.base, 'GET', r.body.statusUrl);
      assert.equal(st.status, 200, st.text);
      assert.equal(st.body.state, 'succeeded');
      assert.equal(st.body.libraryState, 'finalized');
      assertError(await call(s.base, 'GET', `/api/jobs/${r.body.jobId}`), 401, 'unauthorized');
    } finally {
      await s.kernel.store.setSetting('anonymous', {});
    }
    const key = await createKey(expired.base, { role: 'admin' });
    assertError(await call(expired.base, 'POST', '/api/parse', { headers: bearer(key), json: { url: 'https://github.com/acme/widgets' } }), 403, 'license_expired');
  });

  test('400 for anything that is not an https (or allowed http) repository address', async () => {
    const bad: unknown[] = [
      { url: 'file:///tmp/repo' },
      { url: 'ssh://git@github.com/acme/widgets.git' },
      { url: 'git@github.com:acme/widgets.git' },
      { url: 'git://github.com/acme/widgets.git' },
      { url: 'http://example.com/acme/widgets' },
      { url: 'https://github.com' },
      { url: 'https://github.com/acme' },
      { url: 'https://user:secret@github.com/acme/widgets' },
      { url: 'https://github.com/acme/widgets?x=1' },
      { url: 'https://github.com/acme/../widgets' },
      { url: 'not a url' },
      { url: '' },
      { url: 5 },
      {},
      { url: 'https://github.com/acme/widgets', extra: true },
      [],
    ];
    for (const json of bad) {
      const r = await parse(json, bearer(admin));
      assertError(r, 400, 'invalid_request');
      assert.ok(!r.text.includes('secret'), r.text);
    }
    assertError(await call(s.base, 'POST', '/api/parse', { headers: { ...bearer(admin), 'content-type': 'application/json' }, body: '{"url":' }), 400, 'invalid_request');
  });

  test('a web-page form is accepted by its form alone; reaching the host is the job, whose log says why it failed', async () => {
    const r = await parse({ url: 'https://gitlab.invalid/group/project/-/tree/main/docs' }, bearer(admin));
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.libraryId, '/group/project');
    await s.refdesk.jobs.idle();
    const lib = await call(s.base, 'GET', '/api/libraries/group/project', { headers: bearer(admin) });
    assert.equal(lib.body.source.spec.branch, 'main');
    assert.equal(lib.body.source.spec.folder, 'docs');
    const job = await call(s.base, 'GET', `/api/jobs/${r.body.jobId}`, { headers: bearer(admin) });
    assert.equal(job.body.state, 'failed');
    const log = await call(s.base, 'GET', `/api/jobs/${r.body.jobId}/log`, { headers: bearer(admin) });
    const last = log.body.lines[log.body.lines.length - 1];
    assert.equal(last.level, 'error');
    assert.equal(last.stage, 'failed');
    assert.match(last.message, /^failed: .*gitlab\.invalid/);
    // A failed first build may be parsed again (a retry), not a 409.
    const retry = await parse({ url: 'https://gitlab.invalid/group/project/-/tree/main/docs' }, bearer(admin));
    assert.equal(retry.status, 202, retry.text);
    await s.refdesk.jobs.idle();
  });
});
