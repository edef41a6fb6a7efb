/**
 * The write side of the public API over real HTTP: the add endpoints (each kind's payload checks,
 * a queued job that really runs and finalizes), the OpenAPI upload, refresh, policies, and the
 * OpenAPI document of the API itself.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import { seenGitTokens } from '../fixtures/api-plugins/sources.ts';
import { isSealed } from '../../core/secrets.ts';
import { bearer, call, createKey, indexUpload, qs, startApiServer, writeDocs, type ApiServer } from './helpers/api-server.ts';
import { listenOnLoopback } from '../helpers/listen.ts';

let s: ApiServer;
let site: Server;
let siteBase: string;
let key: string;
let admin: string;
const post = (path: string, json: unknown, k = key) => call(s.base, 'POST', path, { headers: bearer(k), json });
const ctxText = async (libraryId: string, query: string) => (await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId, query }))).text;

const OPENAPI = {
  openapi: '3.0.0',
  info: { title: 'Pets API', description: 'Manage pets.' },
  paths: { '/pets': { get: { summary: 'List every pet in the store' }, post: { summary: 'Adopt a new pet' } } },
};

describe('public API: adding and refreshing libraries, policies', () => {
  before(async () => {
    s = await startApiServer({ config: { api: { maxOpenApiUploadBytes: 4096 } } });
    site = createServer((req, res) => {
      if (req.url === '/llms.txt') return void res.end('# Gizmo\n\n## Setup\n\nRun `gizmo init` to create a gizmo project.\n');
      if (req.url === '/docs/') return void res.end('# Gizmo site\n\n## Deploy\n\nDeploy a gizmo with `gizmo deploy --prod`.\n');
      if (req.url === '/openapi.json') return void res.end(JSON.stringify(OPENAPI));
      res.statusCode = 404;
      res.end('not found');
    });
    siteBase = await listenOnLoopback(site);
    key = await createKey(s.base, { name: 'member' });
    admin = await createKey(s.base, { name: 'admin', role: 'admin' });
  });
  after(async () => {
    site?.close();
    await s?.close();
  });

  test('add endpoints need a key', async () => {
    const r = await call(s.base, 'POST', '/api/v2/add/llmstxt', { json: { llmstxtUrl: `${siteBase}/llms.txt` } });
    assert.equal(r.status, 401);
    assert.match(r.body.message, /Adding a library needs an API key/);
  });

  test('each add endpoint validates its payload and says which field is wrong', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['/api/v2/add/repo/github', {}, /Missing required parameter "docsRepoUrl"/],
      ['/api/v2/add/repo/github', { docsRepoUrl: '' }, /"docsRepoUrl" must not be empty/],
      ['/api/v2/add/repo/github', { docsRepoUrl: 42 }, /"docsRepoUrl" must be a string/],
      ['/api/v2/add/repo/github', { docsRepoUrl: 'https://gitlab.com/a/b' }, /must be a github\.com URL/],
      ['/api/v2/add/repo/github', { docsRepoUrl: 'https://github.com/onlyowner' }, /must name a repository/],
      ['/api/v2/add/repo/gitlab', { docsRepoUrl: 'http://gitlab.com/a/b' }, /must use https/],
      ['/api/v2/add/repo/bitbucket', { docsRepoUrl: 'https://bitbucket.org/a/b', gitToken: ['x'] }, /"gitToken" must be given once/],
      ['/api/v2/add/repo/git', { docsRepoUrl: 'https://user:pw@example.com/a/b' }, /must not contain credentials/],
      ['/api/v2/add/repo/git', { docsRepoUrl: 'https://example.com/a/b', colour: 'red' }, /Unknown field "colour"/],
      ['/api/v2/add/llmstxt', { llmstxtUrl: 'not a url' }, /"llmstxtUrl" must be an absolute http\(s\) URL/],
      ['/api/v2/add/llmstxt', { llmstxtUrl: 'ftp://example.com/llms.txt' }, /must be an http or https URL/],
      ['/api/v2/add/website', { websiteUrl: 'x'.repeat(2001) }, /"websiteUrl" must be at most 2000 characters/],
      ['/api/v2/add/openapi', { url: 'https://example.com/o.json' }, /Unknown field "url"; this endpoint takes: openApiUrl/],
      ['/api/v2/add/openapi', [], /body must be a JSON object/],
    ];
    for (const [path, body, msg] of cases) {
      const r = await post(path, body);
      assert.equal(r.status, 400, `${path} ${JSON.stringify(body).slice(0, 80)}`);
      assert.equal(r.body.error, 'invalid_request');
      assert.match(r.body.message, msg);
    }
    const notJson = await call(s.base, 'POST', '/api/v2/add/llmstxt', { headers: { ...bearer(key), 'content-type': 'application/json' }, body: '{oops' });
    assert.match(notJson.body.message, /not valid JSON/);
    const wrongType = await call(s.base, 'POST', '/api/v2/add/llmstxt', { headers: { ...bearer(key), 'content-type': 'text/plain' }, body: 'x' });
    assert.match(wrongType.body.message, /Content-Type: application\/json/);
  });

  test('a kind whose plugin is not enabled answers 400 naming the kind and how to enable it', async () => {
    const r = await post('/api/v2/add/confluence', { siteUrl: 'https://acme.atlassian.net/wiki', spaceKey: 'ENG' });
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'source_not_enabled');
    assert.match(r.body.message, /"confluence" source is not enabled.*"- use: source-confluence".*REFDESK_CONFIG/);
  });

  test('git: the library is created not finalized, the job runs and finalizes; gitToken is sealed at rest; 409 on a second add', async () => {
    const repo = writeDocs(s.scratch, 'acme/widgets', { 'docs/intro.md': '# Widgets\n\n## Spinner\n\nShow a spinner with `<Spinner size="lg" />`.\n' });
    const r = await post('/api/v2/add/repo/git', { docsRepoUrl: pathToFileURL(repo).href, gitToken: 'ghp_secretvalue123', branch: 'main' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.libraryName, '/acme/widgets');
    assert.match(r.body.message, /Queued \/acme\/widgets from the git source/);
    const stored = (await s.kernel.store.getLibrary('/acme/widgets'))!;
    assert.notEqual(stored.state, 'finalized');
    assert.ok(isSealed(stored.source.spec.token), 'the token is sealed in the store');
    assert.equal(stored.source.spec.provider, 'git');
    assert.equal(stored.source.spec.branch, 'main');
    await s.refdesk.jobs.idle();
    assert.ok(seenGitTokens.includes('ghp_secretvalue123'), 'the source got the token opened');
    assert.match(await ctxText('/acme/widgets', 'spinner size'), /Spinner size="lg"/);
    const again = await post('/api/v2/add/repo/git', { docsRepoUrl: pathToFileURL(repo).href });
    assert.equal(again.status, 409);
    assert.equal(again.body.error, 'already_exists');
    assert.match(again.body.message, /already added.*POST \/api\/v1\/refresh/);
  });

  test('github route: an https github.com URL becomes /owner/repo', async () => {
    const r = await post('/api/v2/add/repo/github', { docsRepoUrl: 'https://github.com/octo/hello.git' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.libraryName, '/octo/hello');
    await s.refdesk.jobs.idle();
    const job = (await s.kernel.store.listJobs({ libraryId: '/octo/hello' }))[0];
    assert.equal(job.state, 'failed', 'the test git source reads file:// only');
    assert.equal((await s.kernel.store.getLibrary('/octo/hello'))?.source.spec.provider, 'github');
  });

  test('llms.txt, website and OpenAPI by URL are fetched from their servers and finalized', async () => {
    const llms = await post('/api/v2/add/llmstxt', { llmstxtUrl: `${siteBase}/llms.txt` });
    assert.equal(llms.status, 200, llms.text);
    assert.equal(llms.body.libraryName, '/llmstxt/127_0_0_1-llms.txt');
    const web = await post('/api/v2/add/website', { websiteUrl: `${siteBase}/docs/`, websiteBaseUrl: siteBase });
    assert.equal(web.body.libraryName, '/websites/127_0_0_1_site', 'the definition\'s deriveId names it');
    const api = await post('/api/v2/add/openapi', { openApiUrl: `${siteBase}/openapi.json` });
    assert.equal(api.body.libraryName, '/openapi/127_0_0_1_openapi');
    await s.refdesk.jobs.idle();
    assert.match(await ctxText(llms.body.libraryName, 'gizmo init'), /gizmo init/);
    assert.match(await ctxText(web.body.libraryName, 'deploy'), /gizmo deploy --prod/);
    assert.match(await ctxText(api.body.libraryName, 'adopt a pet'), /Adopt a new pet/);
  });

  test('libraryTitle names the library (the source does not rename it); a title over 200 characters is refused', async () => {
    const repo = writeDocs(s.scratch, 'acme/handbook', { 'docs/intro.md': '# Handbook\n\n## Gizmos\n\nGizmos are small.\n' });
    const r = await post('/api/v2/add/repo/git', { docsRepoUrl: pathToFileURL(repo).href, libraryTitle: '  Gizmo Handbook ' });
    assert.equal(r.status, 200, r.text);
    await s.refdesk.jobs.idle();
    assert.equal((await s.kernel.store.getLibrary(r.body.libraryName))?.title, 'Gizmo Handbook');
    const long = await post('/api/v2/add/llmstxt', { llmstxtUrl: `${siteBase}/other/llms.txt`, libraryTitle: 'x'.repeat(201) });
    assert.equal(long.status, 400);
    assert.match(long.body.message, /"libraryTitle" must be at most 200 characters/);
  });

  test('a plugin bug answers 500 without details', async () => {
    const r = await post('/api/v2/add/website', { websiteUrl: 'https://crash.invalid/docs' });
    assert.equal(r.status, 500);
    assert.deepEqual(r.body, { error: 'internal_error', message: 'Internal server error. The operator can find details in the server log.' });
  });

  test('openapi-upload: multipart file saved under uploads, library finalized; size cap, field and type checks', async () => {
    const form = new FormData();
    form.append('libraryTitle', 'Pets Spec');
    form.append('openapiFile', new Blob([JSON.stringify(OPENAPI)], { type: 'application/json' }), 'pets.json');
    const r = await call(s.base, 'POST', '/api/v2/add/openapi-upload', { headers: bearer(key), body: form });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.libraryName, '/openapi/pets-spec');
    const spec = (await s.kernel.store.getLibrary('/openapi/pets-spec'))!.source.spec;
    assert.ok(String(spec.path).startsWith(join(s.dataDir, 'uploads')) && existsSync(String(spec.path)));
    await s.refdesk.jobs.idle();
    assert.match(await ctxText('/openapi/pets-spec', 'list pets'), /List every pet/);

    const dup = new FormData();
    dup.append('openapiFile', new Blob([JSON.stringify(OPENAPI)]), 'pets-spec.json');
    assert.equal((await call(s.base, 'POST', '/api/v2/add/openapi-upload', { headers: bearer(key), body: dup })).status, 409);

    const before = readdirSync(join(s.dataDir, 'uploads')).length;
    const big = new FormData();
    big.append('openapiFile', new Blob(['{"x":"' + 'a'.repeat(5000) + '"}']), 'big.json');
    const tooBig = await call(s.base, 'POST', '/api/v2/add/openapi-upload', { headers: bearer(key), body: big });
    assert.equal(tooBig.status, 422);
    assert.equal(tooBig.body.error, 'too_large');
    assert.match(tooBig.body.message, /larger than 4096 bytes/);
    assert.equal(readdirSync(join(s.dataDir, 'uploads')).length, before, 'nothing half-written is left');

    const wrongField = new FormData();
    wrongField.append('spec', new Blob(['{}']), 'x.json');
    const wf = await call(s.base, 'POST', '/api/v2/add/openapi-upload', { headers: bearer(key), body: wrongField });
    assert.equal(wf.status, 400);
    assert.match(wf.body.message, /Unexpected file field "spec"; send the specification in "openapiFile"/);
    const noFile = new FormData();
    noFile.append('libraryTitle', 'x');
    assert.match((await call(s.base, 'POST', '/api/v2/add/openapi-upload', { headers: bearer(key), body: noFile })).body.message, /No specification file/);
    const json = await post('/api/v2/add/openapi-upload', { openapiFile: '{}' });
    assert.match(json.body.message, /multipart\/form-data/);
  });

  test('openapi-upload: a file that is not an OpenAPI document is a 400 at upload naming the file; nothing is kept', async () => {
    const uploads = join(s.dataDir, 'uploads');
    const count = () => (existsSync(uploads) ? readdirSync(uploads).length : 0);
    const before = count();
    const libraries = (await s.kernel.store.listLibraries()).length;
    const cases: Array<[string, string, RegExp]> = [
      ['notes.txt', 'Just some notes, not a spec.\n', /"notes\.txt" is not an OpenAPI document: it is plain text, not a JSON or YAML document\. Upload an OpenAPI 3/],
      ['broken.json', '{"openapi": "3.0.0", "paths": {', /"broken\.json" is not an OpenAPI document: it is neither valid JSON nor valid YAML/],
      ['package.json', JSON.stringify({ name: 'x', version: '1.0.0' }), /"package\.json" is not an OpenAPI document: it has no "openapi" or "swagger" field at the top level/],
      ['list.yaml', '- a\n- b\n', /"list\.yaml" is not an OpenAPI document: its top level is not an object/],
      ['empty.yaml', '', /"empty\.yaml" is not an OpenAPI document: it is empty/],
    ];
    for (const [fileName, content, message] of cases) {
      const form = new FormData();
      form.append('openapiFile', new Blob([content]), fileName);
      const r = await call(s.base, 'POST', '/api/v2/add/openapi-upload', { headers: bearer(key), body: form });
      assert.equal(r.status, 400, `${fileName}: ${r.text}`);
      assert.equal(r.body.error, 'invalid_request');
      assert.match(r.body.message, message);
      assert.doesNotMatch(r.body.message, /[0-9a-f]{8}-[0-9a-f]{4}-/, 'the server copy (a UUID) is not named');
    }
    assert.equal(count(), before, 'the refused files are removed');
    assert.equal((await s.kernel.store.listLibraries()).length, libraries, 'no library was created');
    // A YAML Swagger 2 document passes the check.
    const yaml = new FormData();
    yaml.append('openapiFile', new Blob(['swagger: "2.0"\ninfo:\n  title: Old pets\n  version: "1"\npaths:\n  /pets:\n    get:\n      summary: List the old pets\n']), 'old-pets.yaml');
    const ok = await call(s.base, 'POST', '/api/v2/add/openapi-upload', { headers: bearer(key), body: yaml });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.libraryName, '/openapi/old-pets');
    await s.refdesk.jobs.idle();
  });

  test('refresh of a version that was never built: 404 listing the versions that exist', async () => {
    const folder = writeDocs(s.scratch, 'gamma', { 'a.md': '# Gamma\n\n## One\n\nGamma words.\n' });
    await indexUpload(s.kernel, 'gamma', folder);
    await indexUpload(s.kernel, 'gamma', folder, { version: '1.0' });
    for (const libraryName of ['/docs/gamma/2.0', '/docs/gamma@2.0']) {
      const r = await post('/api/v1/refresh', { libraryName });
      assert.equal(r.status, 404, r.text);
      assert.equal(r.body.error, 'version_not_found');
      assert.match(r.body.message, /Version "2\.0" of library \/docs\/gamma was never built.*Its versions: \/docs\/gamma@1\.0; refresh one of them, or the library itself \("\/docs\/gamma"\)/);
    }
    const ok = await post('/api/v1/refresh', { libraryName: '/docs/gamma/1.0' });
    assert.equal(ok.status, 200, ok.text);
    await s.refdesk.jobs.idle();
  });

  test('refresh: queues a new build; 401, 400, 404, 301 and 403 as the spec says', async () => {
    const folder = writeDocs(s.scratch, 'beta', { 'a.md': '# Beta\n\n## One\n\nFirst words.\n' });
    await indexUpload(s.kernel, 'beta', folder);
    writeDocs(s.scratch, 'beta', { 'a.md': '# Beta\n\n## Two\n\nSecond edition words.\n' });
    assert.equal((await call(s.base, 'POST', '/api/v1/refresh', { json: { libraryName: '/docs/beta' } })).status, 401);
    const r = await post('/api/v1/refresh', { libraryName: '/docs/beta' });
    assert.equal(r.status, 200, r.text);
    assert.match(r.body.message, /Refresh of \/docs\/beta queued/);
    await s.refdesk.jobs.idle();
    assert.match(await ctxText('/docs/beta', 'second edition'), /Second edition words/);
    const cases: Array<[unknown, number, RegExp]> = [
      [{}, 400, /Missing required parameter "libraryName"/],
      [{ libraryName: 'beta' }, 400, /must start with '\/'/],
      [{ libraryName: '/docs/beta', branch: 'dev' }, 400, /apply to git libraries only/],
      [{ libraryName: '/docs/nope' }, 404, /"\/docs\/nope" not found/],
    ];
    for (const [body, status, msg] of cases) {
      const x = await post('/api/v1/refresh', body);
      assert.equal(x.status, status, JSON.stringify(body));
      assert.match(x.body.message, msg);
    }
    await call(s.base, 'POST', '/api/admin/rename', { json: { from: '/docs/beta', to: '/docs/beta2' } });
    const moved = await post('/api/v1/refresh', { libraryName: '/docs/beta' });
    assert.equal(moved.status, 301);
    assert.equal(moved.body.redirectUrl, '/docs/beta2');
  });

  test('policies: GET for any key, PATCH for admin keys; list add/remove/clear; search and context obey it', async () => {
    assert.equal((await call(s.base, 'GET', '/api/v2/policies')).status, 401);
    const g = await call(s.base, 'GET', '/api/v2/policies', { headers: bearer(key) });
    assert.equal(g.status, 200);
    assert.equal(g.body.libraryFilters.mode, null);
    assert.equal(g.body.sourceTypes.public_repos.enabled, true);
    assert.equal(typeof g.body.accessibleLibraryCount, 'number');
    const member = await call(s.base, 'PATCH', '/api/v2/policies', { headers: bearer(key), json: { libraryFilters: { mode: 'select' } } });
    assert.equal(member.status, 403);
    assert.match(member.body.message, /needs an admin key/);
    const patch = (json: unknown) => call(s.base, 'PATCH', '/api/v2/policies', { headers: bearer(admin), json });

    // select mode: only the listed libraries.
    let p = await patch({ libraryFilters: { mode: 'select', select: { allowedLibraries: { add: ['/acme/widgets', '/docs/beta2', '/llmstxt/127_0_0_1-llms.txt'] } } } });
    assert.equal(p.status, 200, p.text);
    p = await patch({ libraryFilters: { select: { allowedLibraries: { remove: ['/docs/beta2'] } } } });
    assert.deepEqual(p.body.libraryFilters.select.allowedLibraries, ['/acme/widgets', '/llmstxt/127_0_0_1-llms.txt']);
    assert.equal(p.body.accessibleLibraryCount, 2);
    const hidden = await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: '/docs/beta2', query: 'words' }));
    assert.equal(hidden.status, 403);
    assert.equal(hidden.body.error, 'access_denied');
    assert.match(hidden.body.message, /Access denied: library \/docs\/beta2 .*not included in the policy's allowed libraries/);
    const sr = await call(s.base, 'GET', '/api/v2/libs/search' + qs({ libraryName: 'widgets', query: 'spinner' }));
    assert.equal(sr.body.searchFilterApplied, true);
    assert.deepEqual(sr.body.results.map((l: any) => l.id), ['/acme/widgets']);
    assert.equal((await post('/api/v1/refresh', { libraryName: '/docs/beta2' })).status, 403);

    // source-type toggles and the quality mode.
    p = await patch({ libraryFilters: { mode: 'quality', select: { allowedLibraries: { clear: true } } }, sourceTypes: { disable: ['llmstxt'] } });
    assert.deepEqual(p.body.libraryFilters.select.allowedLibraries, []);
    assert.equal(p.body.sourceTypes.llmstxt.enabled, false);
    assert.equal((await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: '/llmstxt/127_0_0_1-llms.txt', query: 'init' }))).status, 403);
    p = await patch({ libraryFilters: { quality: { blockedLibraries: { add: ['/acme/widgets'] }, exceptedLibraries: { add: ['/llmstxt/127_0_0_1-llms.txt'] } } } });
    assert.equal((await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: '/acme/widgets', query: 'spinner' }))).status, 403);
    assert.equal((await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: '/llmstxt/127_0_0_1-llms.txt', query: 'init' }))).status, 200, 'excepted libraries bypass every filter');
    p = await patch({ libraryFilters: { quality: { minTrustScore: 5, blockedLibraries: { clear: true } } } });
    const low = await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: '/acme/widgets', query: 'spinner' }));
    const trust = (await s.kernel.store.getLibrary('/acme/widgets'))!.trustScore;
    assert.ok(trust < 5, `the test git source's small build scores ${trust}`);
    assert.match(low.body.message, new RegExp(`trust score ${trust} is below the policy's minimum of 5`));

    const bad: Array<[unknown, RegExp]> = [
      [{}, /must NOT have fewer than 1 properties|at least/],
      [{ sourceTypes: { enable: ['ftp'] } }, /sourceTypes\.enable\[0\]/],
      [{ sourceTypes: { enable: ['websites'], disable: ['websites'] } }, /"websites" is in both enable and disable/],
      [{ libraryFilters: { mode: 'strict' } }, /libraryFilters\.mode/],
      [{ libraryFilters: { quality: { minTrustScore: 11 } } }, /minTrustScore/],
      [{ libraryFilters: { select: { allowedLibraries: { add: ['not-an-id'] } } } }, /allowedLibraries: Invalid library ID/],
      [{ libraryFilters: { select: { allowedLibraries: { add: ['/a/b'], remove: ['/a/b'] } } } }, /both added and removed/],
      [{ colour: 1 }, /colour|additional/],
    ];
    for (const [body, msg] of bad) {
      const r = await patch(body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.body.message, msg, JSON.stringify(body));
    }
    p = await patch({ libraryFilters: { mode: null, quality: { minTrustScore: null } }, sourceTypes: { enable: ['llmstxt'] } });
    assert.equal(p.body.libraryFilters.mode, null);
    const open = await call(s.base, 'GET', '/api/v2/libs/search' + qs({ libraryName: 'widgets', query: 'spinner' }));
    assert.equal(open.body.searchFilterApplied, false);
  });

  test('GET /api/openapi.json is a valid OpenAPI 3.1 document describing every public route', async () => {
    const r = await call(s.base, 'GET', '/api/openapi.json');
    assert.equal(r.status, 200);
    assert.equal(r.body.openapi, '3.1.0');
    const api = (await SwaggerParser.validate(structuredClone(r.body))) as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(api.paths).flatMap(([p, ops]) => Object.keys(ops).filter((m) => m !== 'parameters').map((m) => `${m.toUpperCase()} /api${p.replace(/\{(\w+)\}/g, ':$1')}`)).sort();
    // Readiness is answered by middleware (server/routes/health.ts) before the routers.
    assert.ok(documented.includes('GET /api/ready'));
    const served = s.refdesk.app.middleware
      .flatMap((m: any) => (m.router ? m.router.stack : []))
      .flatMap((layer: any) => layer.methods.filter((x: string) => x !== 'HEAD').map((x: string) => `${x} ${layer.path}`))
      .filter((x: string) => / \/api\/v[12]\//.test(x))
      .sort();
    assert.ok(served.length >= 14, `routes found: ${served.join(', ')}`);
    assert.deepEqual(
      documented.filter((x) => x !== 'GET /api/ready'),
      served,
    );
  });
});
