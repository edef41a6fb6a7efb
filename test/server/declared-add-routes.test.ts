/**
 * What a source plugin declares, the server and the CLI take from it (issue 23 item 4): a
 * custom source loaded by a test config gets its own alias add route (POST /api/v2/add/tracker,
 * its fields checked as the built-in aliases' are), that route's path in /api/openapi.json, its
 * URL match in `refdesk add <url>`, and its policy category (its libraries hidden when that
 * category is disabled), its `refdesk add` prefix and flag, and its refresh field. Two sources
 * declaring one path is a config error naming both.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import SwaggerParser from '@apidevtools/swagger-parser';
import { bearer, call, createKey, qs, ROOT, startApiServer, type ApiServer } from './helpers/api-server.ts';
import { configSources, declaredAddFlags, resolveAddTarget } from '../../server/add-target.ts';
import { runRefdesk } from '../e2e/refdesk-process.ts';
import { aliasAddRoutes } from '../../server/api/add-requests.ts';
import { sourceCategories } from '../../server/access/policy.ts';
import type { SourceDefinition } from '../../core/define.ts';
import trackerPlugin from '../fixtures/custom-source/tracker-source.ts';

const TRACKER = join(ROOT, 'test/fixtures/custom-source/tracker-source.ts');
/** Its library: no deriveId, so /<idPrefix>/<slug of the first string field, the URL>. */
const ID = '/tracker/https-acme.tracker.test';
const tracker = trackerPlugin.definitions[0] as SourceDefinition;

describe('a custom source declares its add route, URL match and policy category', () => {
  let s: ApiServer;
  let key: string;
  let admin: string;
  const post = (path: string, json: unknown, k = key) => call(s.base, 'POST', path, { headers: bearer(k), json });

  before(async () => {
    s = await startApiServer({ plugins: [{ use: TRACKER }] });
    key = await createKey(s.base, { name: 'member' });
    admin = await createKey(s.base, { name: 'admin', role: 'admin' });
  });
  after(() => s?.close());

  test('its alias route adds a library from its own fields, refuses others naming the ones it takes, and the library answers', async () => {
    const bad = await post('/api/v2/add/tracker', { trackerUrl: 'https://acme.tracker.test/', colour: 'red' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /Unknown field "colour"; this endpoint takes: trackerUrl, projectKey, libraryTitle\./);
    const badKey = await post('/api/v2/add/tracker', { trackerUrl: 'https://acme.tracker.test/', projectKey: 'eng' });
    assert.match(badKey.body.message, /"projectKey" must be upper-case letters/);
    const noUrl = await post('/api/v2/add/tracker', { trackerUrl: 'ftp://acme.tracker.test/' });
    assert.match(noUrl.body.message, /"trackerUrl" must be an http or https URL/);

    const r = await post('/api/v2/add/tracker', { trackerUrl: 'https://acme.tracker.test/', projectKey: 'ENG', libraryTitle: 'Acme tracker' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.libraryName, ID);
    assert.match(r.body.message, /Queued \/tracker\/https-acme\.tracker\.test from the tracker source/);
    await s.refdesk.jobs.idle();
    const lib = (await s.kernel.store.getLibrary(r.body.libraryName))!;
    assert.equal(lib.title, 'Acme tracker');
    assert.deepEqual(lib.source.spec, { url: 'https://acme.tracker.test/', project: 'ENG' });
    const ctx = await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: r.body.libraryName, query: 'triage' }));
    assert.equal(ctx.status, 200, ctx.text);
    assert.match(ctx.text, /tracker triage --project ENG/);
  });

  test('its policy category hides its libraries when an admin disables it (and the settings page offers it)', async () => {
    const id = ID;
    const off = await call(s.base, 'PATCH', '/api/v2/policies', { headers: bearer(admin), json: { sourceTypes: { disable: ['websites'] } } });
    assert.equal(off.status, 200, off.text);
    const hidden = await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: id, query: 'triage' }));
    assert.equal(hidden.status, 403);
    assert.match(hidden.body.message, /source type "websites" is disabled/);
    const on = await call(s.base, 'PATCH', '/api/v2/policies', { headers: bearer(admin), json: { sourceTypes: { enable: ['websites'] } } });
    assert.equal(on.body.accessibleLibraryCount, 1);
    assert.equal((await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: id, query: 'triage' }))).status, 200);
    // The settings page's checkboxes: the categories the loaded sources declare, in the policy's order.
    const loaded = [...s.kernel.sources.values()].map((e) => e.def);
    assert.deepEqual(sourceCategories(loaded), ['public_repos', 'private_sources', 'uploaded_files', 'websites', 'llmstxt', 'openapi']);
    assert.deepEqual(sourceCategories([{}]), ['private_sources'], 'a source that declares none is a private source');
  });

  test('POST /api/v1/refresh takes the refresh field it declares, for its libraries only and not anonymously', async () => {
    const refresh = (json: unknown, k?: string) => call(s.base, 'POST', '/api/v1/refresh', { ...(k ? { headers: bearer(k) } : {}), json });
    const r = await refresh({ libraryName: ID, projectKey: 'OPS' }, key);
    assert.equal(r.status, 200, r.text);
    await s.refdesk.jobs.idle();
    assert.deepEqual((await s.kernel.store.getLibrary(ID))!.source.spec, { url: 'https://acme.tracker.test/', project: 'OPS' });
    assert.match((await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: ID, query: 'triage' }))).text, /tracker triage --project OPS/);
    // another source's field, and its own on another source's library
    const git = await refresh({ libraryName: ID, branch: 'dev' }, key);
    assert.equal(git.status, 400);
    assert.match(git.body.message, /"branch" and "gitToken" apply to git libraries only; \/tracker\/https-acme\.tracker\.test comes from a tracker source/);
    const long = await refresh({ libraryName: ID, projectKey: 'X'.repeat(21) }, key);
    assert.equal(long.status, 400);
    assert.match(long.body.message, /projectKey/);
    const unknown = await refresh({ libraryName: ID, colour: 'red' }, key);
    assert.match(unknown.body.message, /Unknown field "colour"; this endpoint takes: libraryName, branch, gitToken, projectKey/);
    const allow = await call(s.base, 'PATCH', '/api/settings', { headers: bearer(admin), json: { anonymous: { refresh: true } } });
    assert.equal(allow.status, 200, allow.text);
    const anon = await refresh({ libraryName: ID, projectKey: 'ENG' });
    assert.equal(anon.status, 403, anon.text);
    assert.match(anon.body.message, /Changing a library's "branch", "gitToken" or "projectKey" needs an API key or an admin/);
  });

  test('/api/openapi.json documents its alias route with the body it declares', async () => {
    const r = await call(s.base, 'GET', '/api/openapi.json');
    const op = r.body.paths['/v2/add/tracker']?.post;
    assert.ok(op, Object.keys(r.body.paths).join(', '));
    assert.equal(op.operationId, 'addTracker');
    assert.deepEqual(Object.keys(op.requestBody.content['application/json'].schema.properties), ['trackerUrl', 'projectKey', 'libraryTitle']);
    assert.ok(r.body.paths['/v2/add/repo/github'], 'the built-in aliases of the loaded sources stay documented');
    await SwaggerParser.validate(structuredClone(r.body));
  });
});

test('refdesk add <url>: the loaded source that scores the URL highest takes it, a custom one included', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-declared-add-'));
  const config = join(dir, 'refdesk.yaml');
  writeFileSync(config, ['extends: default', 'plugins:', `  - use: ${JSON.stringify(TRACKER)}`].join('\n'));
  const sources = await configSources(config).finally(() => rmSync(dir, { recursive: true, force: true }));
  const env = {};
  assert.deepEqual(resolveAddTarget('https://acme.tracker.test/board', { env, sources }), { source: 'tracker', spec: { url: 'https://acme.tracker.test/board' } });
  assert.equal(resolveAddTarget('https://example.com/guide', { env, sources }).source, 'website', 'the website is the generic fallback');
  assert.equal(resolveAddTarget('https://github.com/a/b', { env, sources }).source, 'git');
  const noFallback = sources.filter((d) => d.kind !== 'website');
  assert.throws(() => resolveAddTarget('https://example.com/guide', { env, sources: noFallback }), /no source of this server's config recognises example\.com; name one with --source <kind>/);
});

test("refdesk add: a custom source's prefix and flag (or its environment variable) make its spec, offline through the command", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-declared-cli-'));
  try {
    const config = join(dir, 'refdesk.yaml');
    writeFileSync(config, ['extends: default', 'plugins:', `  - use: ${JSON.stringify(TRACKER)}`].join('\n'));
    const sources = await configSources(config);
    assert.ok(declaredAddFlags(sources, []).includes('project'));
    assert.throws(() => declaredAddFlags(sources, ['project']), /source "tracker": its refdesk add flag "--project" is one of the command's own options/);
    assert.deepEqual(resolveAddTarget('tracker:acme', { env: {}, sources, flags: { project: 'ENG' } }), { source: 'tracker', spec: { url: 'https://acme.tracker.test/', project: 'ENG' } });
    assert.deepEqual(resolveAddTarget('tracker:acme', { env: { TRACKER_PROJECT: 'OPS' }, sources }).spec, { url: 'https://acme.tracker.test/', project: 'OPS' });

    const data = join(dir, 'data');
    const env = { REFDESK_CONFIG: config };
    const added = await runRefdesk(['add', 'tracker:acme', '--project', 'ENG'], data, 60_000, env);
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, /^\/tracker\/https-acme\.tracker\.test: 1 files/m);
    const ctx = await runRefdesk(['context', ID, 'triage'], data, 60_000, env);
    assert.match(ctx.stdout, /tracker triage --project ENG/);
    const unknown = await runRefdesk(['add', 'tracker:acme', '--colour', 'red'], data, 60_000, env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /--colour/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('two sources declaring one add path is a config error naming both', () => {
  const twin = { ...tracker, kind: 'tracker-two' } as SourceDefinition;
  assert.throws(
    () => aliasAddRoutes([{ kind: 'tracker', def: tracker }, { kind: 'tracker-two', def: twin }]),
    /source "tracker-two": add route "tracker": the source "tracker" declares it already/,
  );
  const bad = { ...tracker, addRoutes: [{ ...tracker.addRoutes![0], path: 'source/x' }] } as SourceDefinition;
  assert.throws(() => aliasAddRoutes([{ kind: 'tracker', def: bad }]), /not source\/\.\.\./);
});
