/**
 * The library lifecycle routes over real HTTP (issue 19): /api/sources, uploads, /api/libraries
 * (list, detail, refresh, delete), /api/jobs (list, detail, log, events, cancel), each with the
 * anonymous permission On and Off, an admin key, a member key and an expired licence.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { bearer, call, createKey, qs, startApiServer, type ApiServer, type Reply } from './helpers/api-server.ts';
import { listenOnLoopback } from '../helpers/listen.ts';
import { buildTarGz } from '../plugins/source-upload/archive-builders.ts';
import { buildZip } from '../plugins/source-upload/archive-builders.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { defaultPolicy } from '../../server/access/policy.ts';

let s: ApiServer;
let expired: ApiServer;
let site: Server;
let siteBase: string;
let admin: string;
let member: string;
/** GET requests per path of the llms.txt site. */
const reads = new Map<string, number>();
/** Paths whose answer waits until the test releases it. */
const held = new Map<string, ServerResponse[]>();
/** What the site answers per path (default: a page naming the path). */
const pages = new Map<string, string>();

const llms = (name: string) => `# ${name}\n\n## Setup\n\nRun \`${name} init\` to create a ${name} project with the wizard.\n`;
const anon = (perms: Record<string, boolean>) => s.kernel.store.setSetting('anonymous', perms);
const asAdmin = () => bearer(admin);
const asMember = () => bearer(member);

function release(path: string): void {
  for (const r of held.get(path) ?? []) r.end(pages.get(path) ?? llms(path.replace(/\W/g, '')));
  held.delete(path);
}

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Adds an llms.txt library through the admin route and waits for its build. */
async function addLlms(name: string): Promise<{ id: string; jobId: string }> {
  const a = await call(s.base, 'POST', '/api/admin/add', { json: { source: 'llmstxt', id: `/llmstxt/${name.replace(/\W/g, '')}`, spec: { url: `${siteBase}/${name}` } } });
  assert.equal(a.status, 202, a.text);
  await s.refdesk.jobs.idle();
  return { id: a.body.libraryName, jobId: a.body.jobId };
}

function form(files: Array<{ name: string; data: string | Buffer }>, fields: Record<string, string> = {}): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  for (const file of files) f.append('file', new Blob([typeof file.data === 'string' ? file.data : new Uint8Array(file.data)]), file.name);
  return f;
}

const upload = (server: ApiServer, body: FormData | string, headers: Record<string, string> = {}) => call(server.base, 'POST', '/api/libraries/upload', { headers, body });

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

function assertError(r: Reply, status: number, code: string): void {
  assert.equal(r.status, status, r.text);
  assert.equal(r.body?.error, code, r.text);
  assert.equal(typeof r.body?.message, 'string');
}

describe('library lifecycle routes', () => {
  before(async () => {
    site = createServer((req, res) => {
      const path = req.url ?? '';
      reads.set(path, (reads.get(path) ?? 0) + 1);
      const wait = held.get(path);
      if (wait) return void wait.push(res);
      res.end(pages.get(path) ?? llms(path.replace(/\W/g, '')));
    });
    siteBase = await listenOnLoopback(site);
    s = await startApiServer({ app: { jobEvents: { heartbeatMs: 50, progressMs: 10 } } });
    expired = await startApiServer({ app: { access: { licence: { expired: () => true, expiresAt: () => '2020-01-01' } } } });
    admin = await createKey(s.base, { name: 'admin', role: 'admin' });
    member = await createKey(s.base, { name: 'member' });
  });
  after(async () => {
    for (const p of [...held.keys()]) release(p);
    site?.closeAllConnections();
    site?.close();
    await s?.close();
    await expired?.close();
  });

  test('GET /api/sources: every loaded kind with its title and spec schema, secret fields writeOnly', async () => {
    const r = await call(s.base, 'GET', '/api/sources');
    assert.equal(r.status, 200, r.text);
    const kinds = r.body.sources.map((x: { kind: string }) => x.kind).sort();
    assert.deepEqual(kinds, [...s.kernel.sources.keys()].sort());
    const git = r.body.sources.find((x: { kind: string }) => x.kind === 'git');
    assert.equal(git.title, 'Git repository');
    assert.equal(git.specSchema.properties.token.writeOnly, true);
    assert.deepEqual(git.secretFields, ['token']);
    const up = r.body.sources.find((x: { kind: string }) => x.kind === 'upload');
    assert.equal(up.idPrefix, 'docs');
    assert.deepEqual(up.specSchema.required, ['path']);
  });

  test('upload: Off -> 401 anonymous, 403 member, 202 admin (zip); On -> 202 anonymous (tar.gz); expired licence -> 403', async () => {
    await anon({});
    const zip = buildZip([{ name: 'docs/zipped.md', data: '# Zipped\n\n## Install\n\nRun `zipped install` to set up the zipped tool.\n' }]);
    assertError(await upload(s, form([{ name: 'docs.zip', data: zip }], { name: 'zipped' })), 401, 'unauthorized');
    assertError(await upload(s, form([{ name: 'docs.zip', data: zip }], { name: 'zipped' }), asMember()), 403, 'forbidden');
    const ok = await upload(s, form([{ name: 'docs.zip', data: zip }], { name: 'zipped' }), asAdmin());
    assert.equal(ok.status, 202, ok.text);
    assert.equal(ok.body.libraryId, '/docs/zipped');
    assert.equal(ok.body.libraryName, '/docs/zipped');
    assert.equal(ok.body.state, 'queued');
    assert.match(ok.body.statusUrl, /^\/api\/jobs\/[^/?]+\?token=/);

    await anon({ parse: true });
    const tgz = buildTarGz([{ name: 'guide/tarred.md', data: '# Tarred\n\n## Usage\n\nCall `tarred.run()` to run the tarred pipeline.\n' }]);
    const anonOk = await upload(s, form([{ name: 'docs.tar.gz', data: tgz }], { name: 'tarred', version: 'v1' }));
    assert.equal(anonOk.status, 202, anonOk.text);
    await s.refdesk.jobs.idle();
    for (const [id, q, want] of [
      ['/docs/zipped', 'install', 'zipped install'],
      ['/docs/tarred/v1', 'run the pipeline', 'tarred.run()'],
    ]) {
      const c = await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: id, query: q }));
      assert.equal(c.status, 200, c.text);
      assert.ok(c.text.includes(want), c.text);
    }
    assertError(await upload(expired, form([{ name: 'docs.zip', data: zip }], { name: 'late' })), 401, 'unauthorized');
    const expiredAdmin = await createKey(expired.base, { role: 'admin' });
    assertError(await upload(expired, form([{ name: 'docs.zip', data: zip }], { name: 'late' }), bearer(expiredAdmin)), 403, 'license_expired');
    await anon({});
  });

  test('upload of plain files keeps their relative paths; bad names, no name, no files and non-multipart bodies are 400s that leave no file', async () => {
    const files = [
      { name: 'guide/intro.md', data: '# Intro\n\n## Getting started\n\nStart the plain tool with `plain start --fast`.\n' },
      { name: 'reference.md', data: '# Reference\n\n## Flags\n\nThe `--verbose` flag prints every plain step.\n' },
      { name: 'binary.md', data: Buffer.from([0x23, 0x20, 0x00, 0x01, 0x02, 0xff, 0xfe, 0x00]) },
    ];
    const ok = await upload(s, form(files, { name: 'plain', title: 'Plain Tool' }), asAdmin());
    assert.equal(ok.status, 202, ok.text);
    await s.refdesk.jobs.idle();
    const job = await call(s.base, 'GET', `/api/jobs/${ok.body.jobId}`, { headers: asAdmin() });
    assert.equal(job.body.state, 'succeeded', job.text);
    assert.equal(job.body.progress.documents, 2);
    assert.equal(job.body.progress.documentsTotal, 3);
    // The log names the document each line is about: the skipped one with its reason, the chunk counts of the others.
    const log = (await call(s.base, 'GET', `/api/jobs/${ok.body.jobId}/log`, { headers: asAdmin() })).body.lines as Array<{ level: string; stage: string; message: string; path?: string }>;
    assert.ok(log.some((l) => l.level === 'warn' && l.path === 'binary.md' && /^Skipped binary\.md: /.test(l.message)), JSON.stringify(log));
    for (const p of ['guide/intro.md', 'reference.md']) assert.ok(log.some((l) => l.path === p && l.stage === 'reading' && /: \d+ snippets$/.test(l.message)), `no chunk count line for ${p}`);
    const paths = (await s.kernel.store.getSnippets('/docs/plain', '')).map((x) => x.sourcePath);
    assert.ok(paths.includes('guide/intro.md') && paths.includes('reference.md'), paths.join(','));
    const lib = await call(s.base, 'GET', '/api/libraries/docs/plain');
    assert.equal(lib.body.title, 'Plain Tool');

    const before = readdirSync(join(s.dataDir, 'uploads')).sort();
    assertError(await upload(s, form([{ name: '../evil.md', data: '# Evil' }], { name: 'evil' }), asAdmin()), 400, 'invalid_request');
    assertError(await upload(s, form([{ name: '/etc/evil.md', data: '# Evil' }], { name: 'evil' }), asAdmin()), 400, 'invalid_request');
    assertError(await upload(s, form([{ name: 'a.md', data: '# A' }, { name: 'a.md', data: '# A again' }], { name: 'evil' }), asAdmin()), 400, 'invalid_request');
    assertError(await upload(s, form([{ name: 'a.md', data: '# A' }]), asAdmin()), 400, 'invalid_request');
    assertError(await upload(s, form([], { name: 'empty' }), asAdmin()), 400, 'invalid_request');
    assertError(await upload(s, form([{ name: 'a.md', data: '# A' }], { name: 'x', colour: 'red' }), asAdmin()), 400, 'invalid_request');
    assertError(await upload(s, JSON.stringify({ name: 'x' }), { ...asAdmin(), 'content-type': 'application/json' }), 400, 'invalid_request');
    assertError(await upload(s, '--x\r\ncontent-disposition: form-data; name="name"\r\n\r\nabc', { ...asAdmin(), 'content-type': 'multipart/form-data; boundary=x' }), 400, 'invalid_request');
    const zip = buildZip([{ name: 'a.md', data: '# A' }]);
    assertError(await upload(s, form([{ name: 'a.zip', data: zip }, { name: 'b.md', data: '# B' }], { name: 'mixed' }), asAdmin()), 400, 'invalid_request');
    assert.deepEqual(readdirSync(join(s.dataDir, 'uploads')).sort(), before);
    assert.equal(await s.kernel.store.getLibrary('/docs/evil'), null);
  });

  test('upload over uploads.maxBytes or uploads.maxFiles is refused and leaves nothing', async () => {
    const small = await startApiServer({ config: { uploads: { maxBytes: 2048, maxFiles: 2 } } });
    try {
      const key = await createKey(small.base, { role: 'admin' });
      assertError(await upload(small, form([{ name: 'big.md', data: '# Big\n\n' + 'x'.repeat(5000) }], { name: 'big' }), bearer(key)), 422, 'too_large');
      assertError(
        await upload(small, form([{ name: 'a.md', data: '# A' }, { name: 'b.md', data: '# B' }, { name: 'c.md', data: '# C' }], { name: 'many' }), bearer(key)),
        422,
        'too_large',
      );
      const ok = await upload(small, form([{ name: 'a.md', data: '# A\n\nThe small server reads `a`.\n' }], { name: 'small' }), bearer(key));
      assert.equal(ok.status, 202, ok.text);
      await small.refdesk.jobs.idle();
      assert.deepEqual(readdirSync(join(small.dataDir, 'uploads')), []);
    } finally {
      await small.close();
    }
  });

  test('the settings\' uploads.maxBytes / maxFiles win over the config, read at each request of a running app; null goes back to the config', async () => {
    const app = await startApiServer({ config: { uploads: { maxBytes: 100_000, maxFiles: 5 } } });
    try {
      const key = await createKey(app.base, { role: 'admin' });
      const settings = (json: unknown) => call(app.base, 'PATCH', '/api/settings', { headers: bearer(key), json });
      const page = (n: number) => ({ name: `p${n}.md`, data: `# Page ${n}\n\nThe settings limit reads page ${n}.\n` + 'w'.repeat(5000) });
      const first = await upload(app, form([page(1)], { name: 'limits' }), bearer(key));
      assert.equal(first.status, 202, first.text);
      await app.refdesk.jobs.idle();

      const a = await settings({ uploads: { maxBytes: 2048 } });
      assert.equal(a.status, 200, a.text);
      assert.deepEqual(a.body.uploads, { maxBytes: 2048, maxFiles: null });
      assert.deepEqual(a.body.changed, ['uploads.maxBytes']);
      const big = await upload(app, form([page(2)], { name: 'limits' }), bearer(key));
      assertError(big, 422, 'too_large');
      assert.match(big.body.message, /2048 bytes/);

      const b = await settings({ uploads: { maxBytes: null, maxFiles: 1 } });
      assert.deepEqual(b.body.uploads, { maxBytes: null, maxFiles: 1 });
      assert.equal((await upload(app, form([page(3)], { name: 'limits' }), bearer(key))).status, 202, 'maxBytes back to the config (100000)');
      await app.refdesk.jobs.idle();
      assertError(await upload(app, form([page(4), page(5)], { name: 'limits' }), bearer(key)), 422, 'too_large');

      const c = await settings({ uploads: null });
      assert.deepEqual(c.body.uploads, { maxBytes: null, maxFiles: null });
      assert.deepEqual((await call(app.base, 'GET', '/api/settings', { headers: bearer(key) })).body.uploads, { maxBytes: null, maxFiles: null });
      assert.equal((await upload(app, form([page(6), page(7)], { name: 'limits' }), bearer(key))).status, 202, 'maxFiles back to the config (5)');
      await app.refdesk.jobs.idle();

      for (const bad of [{ uploads: { maxBytes: 0 } }, { uploads: { maxFiles: 1.5 } }, { uploads: { maxBytes: '2048' } }, { uploads: { maxBytes: 1e12 } }, { uploads: { maxSize: 1 } }, { uploads: [] }]) {
        const r = await settings(bad);
        assert.equal(r.status, 400, JSON.stringify(bad));
        assert.equal(r.body.error, 'invalid_request');
        assert.match(r.body.message, /uploads/);
      }
      assert.deepEqual((await call(app.base, 'GET', '/api/settings', { headers: bearer(key) })).body.uploads, { maxBytes: null, maxFiles: null }, 'a refused change writes nothing');
    } finally {
      await app.close();
    }
  });

  test('GET /api/libraries: state, versions, source, counts and last job; the policy filters what non-admins see', async () => {
    const { id } = await addLlms('listed.txt');
    const r = await call(s.base, 'GET', '/api/libraries');
    assert.equal(r.status, 200, r.text);
    const lib = r.body.libraries.find((l: { id: string }) => l.id === id);
    assert.equal(lib.state, 'finalized');
    assert.equal(lib.source.kind, 'llmstxt');
    assert.ok(lib.totalSnippets > 0 && lib.totalTokens > 0);
    assert.equal(lib.lastJob.state, 'succeeded');
    assert.ok(Array.isArray(lib.versions));

    const policy = defaultPolicy();
    policy.sourceTypes.llmstxt.enabled = false;
    await s.kernel.store.setSetting('policy', policy);
    try {
      const hidden = await call(s.base, 'GET', '/api/libraries');
      assert.ok(!hidden.body.libraries.some((l: { id: string }) => l.id === id));
      assertError(await call(s.base, 'GET', `/api/libraries${id}`), 403, 'access_denied');
      const all = await call(s.base, 'GET', '/api/libraries', { headers: asAdmin() });
      assert.ok(all.body.libraries.some((l: { id: string }) => l.id === id));
      assert.equal((await call(s.base, 'GET', `/api/libraries${id}`, { headers: asAdmin() })).status, 200);
    } finally {
      await s.kernel.store.setSetting('policy', undefined);
    }
  });

  test('GET /api/libraries/{id}: versions, recent jobs and the spec without secrets; 404 unknown', async () => {
    const token = 'ghp_PlantedLifecycleSecret0123456789abcd';
    const { job } = await addLibrary(s.kernel, { source: 'git', id: '/acme/private', spec: { url: 'https://git.invalid/acme/private.git', token } });
    s.refdesk.jobs.enqueue(job.id);
    await s.refdesk.jobs.idle();
    const r = await call(s.base, 'GET', '/api/libraries/acme/private');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.id, '/acme/private');
    assert.equal(r.body.source.kind, 'git');
    assert.equal(r.body.source.spec.token, '[set]');
    assert.equal(r.body.source.spec.url, 'https://git.invalid/acme/private.git');
    assert.ok(!r.text.includes(token) && !r.text.includes('rdk-secret'), r.text);
    assert.equal(r.body.recentJobs[0].state, 'failed');
    assert.equal(r.body.lastJob.id, job.id);
    const list = await call(s.base, 'GET', '/api/libraries', { headers: asAdmin() });
    assert.ok(!list.text.includes(token));
    const log = await call(s.base, 'GET', `/api/jobs/${job.id}/log`, { headers: asAdmin() });
    assert.ok(!log.text.includes(token));

    const up = await call(s.base, 'GET', '/api/libraries/docs/zipped');
    assert.equal(up.body.source.spec.path, '(uploaded file)');
    assert.ok(!up.text.includes(s.dataDir));
    const v = await call(s.base, 'GET', '/api/libraries/docs/tarred/v1');
    assert.equal(v.status, 200, v.text);
    assert.deepEqual(v.body.versionDetails.map((x: { version: string }) => x.version), ['v1']);
    assertError(await call(s.base, 'GET', '/api/libraries/nobody/nothing'), 404, 'library_not_found');
    assertError(await call(s.base, 'GET', '/api/libraries/bad%20id'), 400, 'invalid_library_id');
  });

  test('POST /api/libraries/{id}/refresh: Off -> 401/403, admin -> 202 with statusUrl; On -> anonymous 202; expired licence -> 403', async () => {
    const { id } = await addLlms('refreshed.txt');
    await anon({});
    assertError(await call(s.base, 'POST', `/api/libraries${id}/refresh`), 401, 'unauthorized');
    assertError(await call(s.base, 'POST', `/api/libraries${id}/refresh`, { headers: asMember() }), 403, 'forbidden');
    const a = await call(s.base, 'POST', `/api/libraries${id}/refresh`, { headers: asAdmin() });
    assert.equal(a.status, 202, a.text);
    assert.equal(a.body.libraryId, id);
    assert.ok(a.body.jobId && a.body.statusUrl && a.body.eventsUrl);
    await s.refdesk.jobs.idle();
    assert.equal(reads.get('/refreshed.txt'), 2);
    await anon({ refresh: true });
    const b = await call(s.base, 'POST', `/api/libraries${id}/refresh`);
    assert.equal(b.status, 202, b.text);
    await s.refdesk.jobs.idle();
    assert.equal(reads.get('/refreshed.txt'), 3);
    // The statusUrl lets the anonymous caller follow its job; without the token it cannot.
    const st = await call(s.base, 'GET', b.body.statusUrl);
    assert.equal(st.status, 200, st.text);
    assert.equal(st.body.state, 'succeeded');
    assert.equal(st.body.libraryState, 'finalized');
    assertError(await call(s.base, 'GET', `/api/jobs/${b.body.jobId}`), 401, 'unauthorized');
    assertError(await call(s.base, 'GET', `/api/jobs/${b.body.jobId}?token=${'x'.repeat(32)}`), 403, 'forbidden');
    assertError(await call(s.base, 'GET', `/api/jobs/${a.body.jobId}?token=${new URL(b.body.statusUrl, s.base).searchParams.get('token')}`), 403, 'forbidden');
    const log = await call(s.base, 'GET', b.body.logUrl);
    assert.equal(log.status, 200, log.text);
    assertError(await call(s.base, 'POST', '/api/libraries/nobody/nothing/refresh', { headers: asAdmin() }), 404, 'library_not_found');
    await anon({});

    const expiredAdmin = await createKey(expired.base, { role: 'admin' });
    assertError(await call(expired.base, 'POST', '/api/libraries/docs/any/refresh', { headers: bearer(expiredAdmin) }), 403, 'license_expired');
  });

  test('DELETE /api/libraries/{id}: Off -> 401/403; On -> anonymous; a pinned ID deletes that version; 404 unknown; 409 while a job runs; never blocked by an expired licence', async () => {
    const { id } = await addLlms('deleted.txt');
    await anon({});
    assertError(await call(s.base, 'DELETE', `/api/libraries${id}`), 401, 'unauthorized');
    assertError(await call(s.base, 'DELETE', `/api/libraries${id}`, { headers: asMember() }), 403, 'forbidden');
    await anon({ delete: true });
    const d = await call(s.base, 'DELETE', `/api/libraries${id}`);
    assert.equal(d.status, 200, d.text);
    assert.equal(await s.kernel.store.getLibrary(id), null);
    assertError(await call(s.base, 'DELETE', `/api/libraries${id}`), 404, 'library_not_found');
    await anon({});

    // A pinned version only: the library and its default version stay.
    const v = await call(s.base, 'DELETE', '/api/libraries/docs/tarred/v1', { headers: asAdmin() });
    assert.equal(v.status, 200, v.text);
    assert.equal(v.body.version, 'v1');

    // While a job runs: 409, and nothing is deleted.
    const { id: busyId } = await addLlms('busy.txt');
    held.set('/busy.txt', []);
    const refresh = await call(s.base, 'POST', `/api/libraries${busyId}/refresh`, { headers: asAdmin() });
    await until('the refresh to run', () => (held.get('/busy.txt')?.length ?? 0) > 0);
    assertError(await call(s.base, 'DELETE', `/api/libraries${busyId}`, { headers: asAdmin() }), 409, 'library_busy');
    release('/busy.txt');
    await s.refdesk.jobs.idle();
    assert.equal((await s.kernel.store.getJob(refresh.body.jobId))?.state, 'succeeded');

    // An expired licence never blocks deleting.
    const key = await createKey(expired.base, { role: 'admin' });
    // Added before it expired (an expired licence refuses adding: 403 license_expired).
    assertError(await call(expired.base, 'POST', '/api/admin/add', { json: { source: 'llmstxt', id: '/llmstxt/refused', spec: { url: `${siteBase}/expired.txt` } } }), 403, 'license_expired');
    const { library: gone, job } = await addLibrary(expired.kernel, { source: 'llmstxt', id: '/llmstxt/expired', spec: { url: `${siteBase}/expired.txt` } });
    await runIngestJob(expired.kernel, job.id);
    const del = await call(expired.base, 'DELETE', `/api/libraries${gone.id}`, { headers: bearer(key) });
    assert.equal(del.status, 200, del.text);
  });

  test('delete removes everything: no file of the library is left in DATA_DIR (segments, job logs, uploads)', async () => {
    const doc = '# Vanish\n\n## Use\n\nCall `vanish.now()` to make the vanishing library go.\n';
    const ok = await upload(s, form([{ name: 'docs.tar.gz', data: buildTarGz([{ name: 'vanish.md', data: doc }]) }], { name: 'vanish' }), asAdmin());
    assert.equal(ok.status, 202, ok.text);
    await s.refdesk.jobs.idle();
    // A second build (a re-upload), so the library has two jobs with logs.
    const again = await upload(s, form([{ name: 'vanish.md', data: doc + '\nMore text.\n' }], { name: 'vanish', version: 'v2' }), asAdmin());
    assert.equal(again.status, 202, again.text);
    await s.refdesk.jobs.idle();
    const buildIds = [(await s.kernel.store.getVersion('/docs/vanish', ''))?.activeBuildId, (await s.kernel.store.getVersion('/docs/vanish', 'v2'))?.activeBuildId];
    assert.ok(buildIds.every(Boolean), JSON.stringify(buildIds));
    const jobIds = (await s.kernel.store.listJobs({ libraryId: '/docs/vanish' })).map((j) => j.id);
    assert.equal(jobIds.length, 2);
    const filesBefore = filesUnder(s.dataDir).map((f) => relative(s.dataDir, f));
    for (const b of buildIds) assert.ok(filesBefore.some((f) => f.includes(b!)), `no file of build ${b} before: ${filesBefore.join(', ')}`);
    for (const j of jobIds) assert.ok(filesBefore.includes(join('jobs', `${j}.log`)), `no log of job ${j}`);

    const d = await call(s.base, 'DELETE', '/api/libraries/docs/vanish', { headers: asAdmin() });
    assert.equal(d.status, 200, d.text);
    const after = filesUnder(s.dataDir).map((f) => relative(s.dataDir, f));
    for (const b of buildIds) assert.ok(!after.some((f) => f.includes(b!)), `a file of build ${b} is left: ${after.join(', ')}`);
    for (const j of jobIds) assert.ok(!after.some((f) => f.includes(j)), `a file of job ${j} is left`);
    assert.deepEqual(readdirSync(join(s.dataDir, 'uploads')), []);
    // No file but the database (whose free pages may keep old bytes) mentions the library.
    for (const f of after.filter((x) => !x.endsWith('.db') && !x.endsWith('.sqlite') && !x.includes('refdesk.'))) {
      assert.ok(!readFileSync(join(s.dataDir, f), 'latin1').includes('/docs/vanish'), `${f} mentions /docs/vanish`);
    }
  });

  test('GET /api/jobs (admins): filters by library, state and limit; bad filters are 400s', async () => {
    const { id } = await addLlms('jobs-list.txt');
    assertError(await call(s.base, 'GET', '/api/jobs'), 401, 'unauthorized');
    assertError(await call(s.base, 'GET', '/api/jobs', { headers: asMember() }), 403, 'forbidden');
    const r = await call(s.base, 'GET', '/api/jobs' + qs({ libraryId: id }), { headers: asAdmin() });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.jobs.length, 1);
    const j = r.body.jobs[0];
    assert.equal(j.libraryId, id);
    assert.equal(j.state, 'succeeded');
    assert.equal(j.stage, 'done');
    assert.equal(j.progress.documents, 1);
    assert.ok(j.progress.snippets > 0);
    assert.ok(j.timings.startedAt && j.timings.finishedAt && j.timings.runMs >= 0);
    const failed = await call(s.base, 'GET', '/api/jobs' + qs({ state: 'failed', limit: '1' }), { headers: asAdmin() });
    assert.equal(failed.status, 200);
    assert.ok(failed.body.jobs.length <= 1 && failed.body.jobs.every((x: { state: string }) => x.state === 'failed'));
    assertError(await call(s.base, 'GET', '/api/jobs?state=done', { headers: asAdmin() }), 400, 'invalid_request');
    assertError(await call(s.base, 'GET', '/api/jobs?limit=0', { headers: asAdmin() }), 400, 'invalid_request');
    assertError(await call(s.base, 'GET', '/api/jobs?limit=1&limit=2', { headers: asAdmin() }), 400, 'invalid_request');
    assertError(await call(s.base, 'GET', '/api/jobs/job_unknown', { headers: asAdmin() }), 404, 'not_found');
  });

  test('GET /api/jobs/{id}/log: structured lines (time, level, stage, message) from queued to finalized', async () => {
    const { jobId } = await addLlms('logged.txt');
    const r = await call(s.base, 'GET', `/api/jobs/${jobId}/log`, { headers: asAdmin() });
    assert.equal(r.status, 200, r.text);
    const lines = r.body.lines as Array<{ seq: number; at: string; level: string; stage: string; message: string }>;
    assert.equal(lines[0].stage, 'queued');
    assert.match(lines[0].message, /^queued: llmstxt source/);
    assert.ok(lines.some((l) => l.stage === 'done' && /^finalized: 1 documents/.test(l.message)), JSON.stringify(lines));
    for (const l of lines) assert.ok(!Number.isNaN(Date.parse(l.at)) && ['debug', 'info', 'warn', 'error'].includes(l.level));
    assert.deepEqual(lines.map((l) => l.seq), lines.map((_, i) => i + 1));
    // Written as one JSON-lines file per job.
    const file = readFileSync(join(s.dataDir, 'jobs', `${jobId}.log`), 'utf8').trim().split('\n');
    assert.equal(file.length, lines.length);
    const after = await call(s.base, 'GET', `/api/jobs/${jobId}/log?after=1`, { headers: asAdmin() });
    assert.equal(after.body.lines.length, lines.length - 1);
  });

  test('cancel: member 403; a running job stops and the served version stays; a queued one never runs; an ended one is left as it is', async () => {
    pages.set('/cancel.txt', llms('firstversion'));
    const { id } = await addLlms('cancel.txt');
    const { id: otherId } = await addLlms('queued-first.txt');
    pages.set('/cancel.txt', llms('secondversion'));
    held.set('/cancel.txt', []);
    const running = await call(s.base, 'POST', `/api/libraries${id}/refresh`, { headers: asAdmin() });
    await until('the refresh to read its source', () => (held.get('/cancel.txt')?.length ?? 0) > 0);
    // A second job queued behind it.
    held.set('/queued-first.txt', []);
    const queued = await call(s.base, 'POST', `/api/libraries${otherId}/refresh`, { headers: asAdmin() });
    assert.equal((await s.kernel.store.getJob(queued.body.jobId))?.state, 'queued');

    assertError(await call(s.base, 'POST', `/api/jobs/${running.body.jobId}/cancel`), 401, 'unauthorized');
    assertError(await call(s.base, 'POST', `/api/jobs/${running.body.jobId}/cancel`, { headers: asMember() }), 403, 'forbidden');
    const q = await call(s.base, 'POST', `/api/jobs/${queued.body.jobId}/cancel`, { headers: asAdmin() });
    assert.equal(q.status, 200, q.text);
    assert.equal(q.body.cancelled, true);
    assert.equal(q.body.job.state, 'failed');
    assert.equal(q.body.job.error.code, 'cancelled');
    const c = await call(s.base, 'POST', `/api/jobs/${running.body.jobId}/cancel`, { headers: asAdmin() });
    assert.equal(c.status, 200, c.text);
    assert.equal(c.body.cancelled, true);
    assert.equal(c.body.job.state, 'failed');
    assert.equal(c.body.job.stage, 'cancelled');
    release('/cancel.txt');
    await s.refdesk.jobs.idle();
    const readsBefore = reads.get('/queued-first.txt');
    release('/queued-first.txt');
    await s.refdesk.jobs.idle();
    assert.equal(reads.get('/queued-first.txt'), readsBefore, 'the cancelled queued job read its source');
    assert.equal((await s.kernel.store.getJob(queued.body.jobId))?.state, 'failed');

    // The served version is the first one, untouched.
    const ctx = await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: id, query: 'init project wizard' }));
    assert.equal(ctx.status, 200, ctx.text);
    assert.ok(ctx.text.includes('firstversion init') && !ctx.text.includes('secondversion'), ctx.text);
    assert.equal((await s.kernel.store.getLibrary(id))?.state, 'finalized');
    const log = await call(s.base, 'GET', `/api/jobs/${running.body.jobId}/log`, { headers: asAdmin() });
    assert.ok(log.body.lines.some((l: { stage: string; message: string }) => l.stage === 'cancelled' && /served version is unchanged/.test(l.message)), log.text);

    const again = await call(s.base, 'POST', `/api/jobs/${running.body.jobId}/cancel`, { headers: asAdmin() });
    assert.equal(again.status, 200);
    assert.equal(again.body.cancelled, false);
    assertError(await call(s.base, 'POST', '/api/jobs/job_unknown/cancel', { headers: asAdmin() }), 404, 'not_found');
  });

  test('GET /api/jobs/{id}/events: state, heartbeats and log lines while it runs; a client that goes leaves no listener; the last event names the end state', async () => {
    const { id } = await addLlms('streamed.txt');
    held.set('/streamed.txt', []);
    const refresh = await call(s.base, 'POST', `/api/libraries${id}/refresh`, { headers: asAdmin() });
    const jobId = refresh.body.jobId as string;
    await until('the job to run', () => (held.get('/streamed.txt')?.length ?? 0) > 0);

    assertError(await call(s.base, 'GET', `/api/jobs/${jobId}/events`), 401, 'unauthorized');
    // A client that reads a little, then goes away.
    const controller = new AbortController();
    const res = await fetch(`${s.base}/api/jobs/${jobId}/events`, { headers: asAdmin(), signal: controller.signal });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    const decoder = new TextDecoder();
    while (!(text.includes('event: state') && text.includes(': heartbeat') && text.includes('event: log'))) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    assert.ok(text.includes('event: state') && text.includes(': heartbeat') && text.includes('event: log'), text);
    assert.equal(s.refdesk.jobs.listenerCount(jobId), 1);
    controller.abort();
    await reader.cancel().catch(() => {});
    await until('the stream to drop its listener', () => s.refdesk.jobs.listenerCount(jobId) === 0);

    // A client that stays until the end.
    const full = fetch(`${s.base}/api/jobs/${jobId}/events`, { headers: asAdmin() }).then((r) => r.text());
    await until('the second stream to listen', () => s.refdesk.jobs.listenerCount(jobId) === 1);
    release('/streamed.txt');
    const body = await full;
    const events = body
      .split('\n\n')
      .filter((b) => b.includes('event: '))
      .map((b) => ({ event: /event: (\w+)/.exec(b)![1], data: JSON.parse(/data: (.*)/.exec(b)![1]) }));
    const last = events[events.length - 1];
    assert.equal(last.event, 'end', body);
    assert.equal(last.data.state, 'succeeded');
    assert.equal(last.data.libraryState, 'finalized');
    const logs = events.filter((e) => e.event === 'log').map((e) => e.data.seq as number);
    assert.deepEqual(logs, [...new Set(logs)].sort((a, b) => a - b), 'log lines repeated or out of order');
    assert.ok(events.some((e) => e.event === 'log' && /^finalized:/.test(e.data.message)), body);
    assert.equal(s.refdesk.jobs.listenerCount(jobId), 0);

    // A stream opened after the end: the state, the whole log, and the end at once.
    const late = await fetch(`${s.base}/api/jobs/${jobId}/events`, { headers: asAdmin() }).then((r) => r.text());
    assert.match(late, /event: end\ndata: .*"state":"succeeded"/);
  });

  test('GET /api/jobs/{id}/events of a queued job whose library is deleted ends with state "deleted"', async () => {
    const { id: blocker } = await addLlms('blocker.txt');
    const { id: doomed } = await addLlms('doomed.txt');
    held.set('/blocker.txt', []);
    await call(s.base, 'POST', `/api/libraries${blocker}/refresh`, { headers: asAdmin() });
    await until('the blocker to run', () => (held.get('/blocker.txt')?.length ?? 0) > 0);
    const queued = await call(s.base, 'POST', `/api/libraries${doomed}/refresh`, { headers: asAdmin() });
    const stream = fetch(`${s.base}/api/jobs/${queued.body.jobId}/events`, { headers: asAdmin() }).then((r) => r.text());
    await until('the stream to listen', () => s.refdesk.jobs.listenerCount(queued.body.jobId) === 1);
    assert.equal((await call(s.base, 'DELETE', `/api/libraries${doomed}`, { headers: asAdmin() })).status, 200);
    const text = await stream;
    assert.match(text, /event: end\ndata: .*"state":"deleted"/);
    assert.equal(s.refdesk.jobs.listenerCount(queued.body.jobId), 0);
    release('/blocker.txt');
    await s.refdesk.jobs.idle();
  });
});
