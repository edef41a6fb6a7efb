/**
 * The REST add endpoints (issue 3) over the real source plugins of the default distribution
 * (issues 5 and 6), end to end: each payload reaches its plugin, the queued job runs, and the
 * library answers context questions. Only the network policy differs from config/default.yaml
 * (127.0.0.1 is allowed, since every upstream here is a test server on this machine).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kernel } from '../../core/kernel.ts';
import type { RefdeskApp } from '../../server/app.ts';
import { gitFixture, type GitFixture } from '../plugins/source-git/helpers.ts';
import { startSite, type TestSite } from '../plugins/source-website/site.ts';
import { startDenoSite } from '../plugins/source-llms-txt/fixture-site.ts';
import { startFakeConfluence, type FakeConfluence } from '../plugins/source-confluence/fake-confluence.ts';
import { makeSpace } from '../plugins/source-confluence/fixtures.ts';
import { startServer as startRouteServer, send, type TestServer } from '../helpers/route-server.ts';
import { CORPORA_DIR, hasCorpora } from '../helpers/corpora.ts';
import { serveConfig, type ServedConfig } from '../helpers/served-config.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TOKEN = 'glpat-RestAddSecret-0123456789';
const PAT = 'confluence-pat-RestAdd-987654';

describe('REST add endpoints over the default source plugins', { skip: hasCorpora ? false : 'shared corpora not present', timeout: 240_000 }, () => {
  let served: ServedConfig;
  let dir: string;
  let kernel: Kernel;
  let refdesk: RefdeskApp;
  let base: string;
  let key: string;
  let git: GitFixture;
  let site: TestSite;
  let deno: TestServer;
  let specs: TestServer;
  let wiki: FakeConfluence;

  before(async () => {
    // The default distribution, with plugin paths made absolute and 127.0.0.1 allowed.
    const yaml = readFileSync(join(ROOT, 'config', 'default.yaml'), 'utf8')
      .replaceAll('../plugins/', join(ROOT, 'plugins') + '/')
      .replace('allowHosts: []', "allowHosts: ['127.0.0.1']")
      .replace(/delayMs: \d+/, 'delayMs: 0');
    assert.match(yaml, /allowHosts: \['127\.0\.0\.1'\]/);
    served = await serveConfig(yaml, { prefix: 'refdesk-rest-add-', keyName: 'e2e' });
    ({ dir, kernel, refdesk, base, key } = served);

    git = await gitFixture({ 'acme/widgets.git': TOKEN });
    git
      .repo('acme/widgets')
      .commit({ 'docs/refresh.md': '# Refresh\n\n## Set the refresh interval\n\nCall `setRefreshInterval` with milliseconds:\n\n```js\nwidgets.setRefreshInterval(5000);\n```\n' })
      .publish();
    git
      .repo('platform/docs-team/handbook')
      .commit({ 'docs/deploy.md': '# Deploy\n\n## Roll back a release\n\nRun the rollback command:\n\n```sh\nhandbook rollback --to previous\n```\n' })
      .publish();
    site = await startSite();
    deno = await startDenoSite(undefined);
    const petstore = readFileSync(join(CORPORA_DIR, 'fixtures', 'swagger-petstore', 'openapi.yaml'));
    specs = await startRouteServer((_req, res, url) => (url.pathname === '/openapi.yaml' ? send(res, 200, petstore, 'application/yaml') : send(res, 404, 'no')));
    wiki = await startFakeConfluence({ space: makeSpace(), email: 'me@example.com', apiToken: 'unused-token', pat: PAT, context: '/confluence' });
  });

  after(async () => {
    await served?.close();
    await Promise.all([git?.close(), site?.close(), deno?.close(), specs?.close(), wiki?.close()]);
  });

  async function add(route: string, body: unknown): Promise<string> {
    const res = await fetch(`${base}/api/v2/add/${route}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = (await res.json()) as { libraryName: string; message: string };
    assert.equal(res.status, 200, JSON.stringify(json));
    await refdesk.jobs.idle();
    const jobs = await kernel.store.listJobs({ libraryId: json.libraryName });
    assert.equal(jobs[0]?.state, 'succeeded', `${json.libraryName}: ${JSON.stringify(jobs[0]?.error)}`);
    return json.libraryName;
  }

  async function context(libraryId: string, query: string): Promise<string> {
    const res = await fetch(`${base}/api/v2/context?${new URLSearchParams({ libraryId, query })}`, { headers: { authorization: `Bearer ${key}` } });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    return text;
  }

  test('repo/git with a token: a private repository', async () => {
    const id = await add('repo/git', { docsRepoUrl: git.url('acme/widgets'), gitToken: TOKEN });
    assert.equal(id, '/acme/widgets');
    assert.match(await context(id, 'set the refresh interval'), /widgets\.setRefreshInterval\(5000\)/);
    assert.ok(!readFileSync(join(dir, 'data', 'refdesk.sqlite')).includes(TOKEN), 'the token is sealed at rest');
  });

  test('repo/git with a nested (GitLab-style) path: the library is the whole path, asked for as such', async () => {
    const id = await add('repo/git', { docsRepoUrl: git.url('platform/docs-team/handbook') });
    assert.equal(id, '/platform/docs-team/handbook');
    assert.match(await context(id, 'roll back a release'), /handbook rollback --to previous/);
    const lib = await kernel.store.getLibrary(id);
    assert.equal(lib?.source.spec.url, git.url('platform/docs-team/handbook'));
  });

  test('repo/git refuses file:// (and pages of a repository) at add, with a 400 saying what to give', async () => {
    const post = (route: string, body: unknown) =>
      fetch(`${base}/api/v2/add/${route}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const before = (await kernel.store.listLibraries()).length;
    const file = await post('repo/git', { docsRepoUrl: 'file:///srv/git/acme/secret.git' });
    const fileBody = (await file.json()) as { error: string; message: string };
    assert.equal(file.status, 400, JSON.stringify(fileBody));
    assert.equal(fileBody.error, 'invalid_request');
    assert.match(fileBody.message, /file:\/\/ repository URLs are turned off.*give an https or ssh repository URL/);
    const page = await post('repo/github', { docsRepoUrl: 'https://github.com/acme/widgets/issues/3' });
    const pageBody = (await page.json()) as { error: string; message: string };
    assert.equal(page.status, 400);
    assert.match(pageBody.message, /names a page of the repository.*give https:\/\/github\.com\/owner\/repo/);
    assert.equal((await kernel.store.listLibraries()).length, before, 'nothing was added');
  });

  test('website: a crawled documentation site', async () => {
    const id = await add('website', { websiteUrl: `${site.origin}/docs/` });
    assert.match(id, /^\/websites\/127_0_0_1_\d+_docs$/);
    assert.match(await context(id, 'path parameter routing'), /routing/i);
  });

  test('llmstxt: an llms.txt and its pages', async () => {
    const id = await add('llmstxt', { llmstxtUrl: `${deno.base}/llms.txt` });
    assert.match(id, /^\/llmstxt\/127_0_0_1_\d+-llms\.txt$/);
    assert.match(await context(id, 'Deno documentation example'), /Deno documentation/);
  });

  test('openapi: a spec by URL', async () => {
    const id = await add('openapi', { openApiUrl: `${specs.base}/openapi.yaml` });
    assert.match(id, /^\/openapi\/127_0_0_1_\d+_openapi\.yaml$/);
    assert.match(await context(id, 'find pets by status'), /findByStatus/);
  });

  test('confluence: a Server/Data Center space with a personal access token', async () => {
    const id = await add('confluence', { siteUrl: `${wiki.origin}/confluence`, spaceKey: 'ENG', deployment: 'server', personalAccessToken: PAT });
    assert.match(id, /^\/confluence\/127_0_0_1_\d+_eng$/);
    assert.match(await context(id, 'install quasarctl'), /quasarctl/i);
    assert.ok(!readFileSync(join(dir, 'data', 'refdesk.sqlite')).includes(PAT), 'the token is sealed at rest');
  });
});
