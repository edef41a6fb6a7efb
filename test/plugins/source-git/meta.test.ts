import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { addLibrary, runIngestJob } from '../../../core/ingest.ts';
import { searchLibraries } from '../../../core/library-search.ts';
import { networkKernel } from '../../helpers/network-kernel.ts';
import { send, startServer, type TestServer } from '../../helpers/route-server.ts';
import { gitFixture, type GitFixture } from './helpers.ts';
import { parseGitUrl } from '../../../plugins/source-git/git-url.ts';
import { repoStatsRequest } from '../../../plugins/source-git/repo-stats.ts';

const TOKEN = 'ghp_PlantedMetaSecret_5151515151';

describe('git library metadata: title, description, branch and stars from the repository and its platform', () => {
  let fx: GitFixture;
  let github: TestServer;
  let gitlab: TestServer;
  let githubDown = false;

  before(async () => {
    fx = await gitFixture({ 'acme/widgets.git': TOKEN });
    fx.repo('acme/widgets', 'trunk')
      .commit({
        'README.md': '<p align="center"><img src="logo.svg"></p>\n\n# Widget Kit [![ci](https://ci/badge.svg)](https://ci)\n\nWidget Kit renders **dashboards** from [plain data](https://example.com).\n\n## Install\n\nRun it.\n',
        'package.json': JSON.stringify({ name: 'widget-kit-npm', description: 'not used: the README names it' }),
        'docs/configure.md': '# Configure\n\n## Set the refresh interval\n\nCall `setRefreshInterval` with milliseconds.\n\n## Pick a theme\n\nThemes are light or dark.\n',
      })
      .publish();
    fx.repo('acme/bare-readme')
      .commit({
        'package.json': JSON.stringify({ name: '@acme/gauges', description: 'Gauges for dashboards.' }),
        'docs/intro.md': '# Gauges intro\n\nA gauge shows one number.\n',
      })
      .publish();
    fx.repo('group/sub/tables').commit({ 'README.md': '# Tables\n\nTables show rows.\n' }).publish();
    github = await startServer((req, res, url) => {
      if (githubDown) return send(res, 503, '{"message":"down"}', 'application/json');
      if (url.pathname === '/repos/acme/widgets') {
        return send(res, 200, JSON.stringify({ full_name: 'acme/widgets', stargazers_count: 4321, owner: { type: 'Organization' }, description: 'platform text' }), 'application/json');
      }
      if (url.pathname === '/repos/acme/bare-readme') return send(res, 200, JSON.stringify({ stargazers_count: 7, owner: { type: 'User' } }), 'application/json');
      return send(res, 404, '{"message":"Not Found"}', 'application/json');
    });
    gitlab = await startServer((_req, res, url) => {
      if (url.pathname === '/api/v4/projects/group%2Fsub%2Ftables' || url.pathname === '/api/v4/projects/group/sub/tables') {
        return send(res, 200, JSON.stringify({ star_count: 88, namespace: { kind: 'group' } }), 'application/json');
      }
      return send(res, 404, '{"message":"404 Project Not Found"}', 'application/json');
    });
  });
  after(async () => {
    await github?.close();
    await gitlab?.close();
    await fx?.close();
  });

  const kernelFor = (t: Parameters<typeof networkKernel>[0]) =>
    networkKernel(t, { 'source-git': { git: { retryDelayMs: 5, githubApiUrl: github.base, gitlabApiUrl: `${gitlab.base}/api/v4` } } });

  test('README H1 and first paragraph name the library; the branch read and the GitHub stars are stored; the token reaches only the API, never the log', async (t) => {
    const kernel = await kernelFor(t);
    const { job } = await addLibrary(kernel, { source: 'git', id: '/acme/widgets', spec: { url: fx.url('acme/widgets'), provider: 'github', token: TOKEN } });
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    const lib = (await kernel.store.getLibrary('/acme/widgets'))!;
    assert.equal(lib.title, 'Widget Kit');
    assert.equal(lib.description, 'Widget Kit renders dashboards from plain data.');
    assert.equal(lib.branch, 'trunk');
    assert.equal(lib.stars, 4321);
    assert.ok(Number.isInteger(lib.trustScore) && lib.trustScore >= 1 && lib.trustScore <= 10, `trust ${lib.trustScore}`);
    assert.ok(lib.benchmarkScore > 0 && lib.benchmarkScore <= 100, `benchmark ${lib.benchmarkScore}`);
    const apiCalls = github.hits('/repos/acme/widgets');
    assert.equal(apiCalls.length, 1);
    assert.equal(apiCalls[0].headers.authorization, `Bearer ${TOKEN}`);
    const log = await kernel.store.getJobLog(job.id);
    assert.ok(log.some((l) => /library scores: trust \d+\/10, benchmark [\d.]+%/.test(l.message)));
    assert.ok(!JSON.stringify(log).includes(TOKEN));

  });

  test('when the API fails the job still succeeds and the stars stay as they were', async (t) => {
    const kernel = await kernelFor(t);
    const { job } = await addLibrary(kernel, { source: 'git', id: '/acme/widgets', spec: { url: fx.url('acme/widgets'), provider: 'github', token: TOKEN } });
    assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
    const first = (await kernel.store.getLibrary('/acme/widgets'))!;
    assert.equal(first.stars, 4321);
    githubDown = true;
    try {
      const again = await addLibrary(kernel, { source: 'git', id: '/acme/widgets', spec: { url: fx.url('acme/widgets'), provider: 'github', token: TOKEN } });
      assert.equal((await runIngestJob(kernel, again.job.id)).state, 'succeeded');
    } finally {
      githubDown = false;
    }
    const lib = (await kernel.store.getLibrary('/acme/widgets'))!;
    assert.equal(lib.stars, 4321);
    assert.equal(lib.title, 'Widget Kit', 'an unchanged commit (nothing re-read) keeps the title');
    assert.equal(lib.branch, 'trunk');
    assert.equal(lib.trustScore, first.trustScore, 'the commit date is kept from the previous build, so the score is stable');
    assert.equal(lib.benchmarkScore, first.benchmarkScore);
  });

  test('without a README H1, package.json names the library; a user-given title wins over both', async (t) => {
    const kernel = await kernelFor(t);
    const { job } = await addLibrary(kernel, { source: 'git', id: '/acme/bare-readme', spec: { url: fx.url('acme/bare-readme'), provider: 'github' } });
    assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
    let lib = (await kernel.store.getLibrary('/acme/bare-readme'))!;
    assert.equal(lib.title, '@acme/gauges');
    assert.equal(lib.description, 'Gauges for dashboards.');
    assert.equal(lib.stars, 7);
    assert.equal(github.hits('/repos/acme/bare-readme').at(-1)?.headers.authorization, undefined, 'no token, no Authorization header');
    // Found by its real name, which is in neither its ID nor its URL.
    const found = await searchLibraries(kernel, 'gauges', '');
    assert.equal(found[0]?.library.id, '/acme/bare-readme');

    const mine = await addLibrary(kernel, { source: 'git', id: '/acme/bare-readme', title: 'Gauges (team copy)', spec: { url: fx.url('acme/bare-readme'), provider: 'github' } });
    assert.equal((await runIngestJob(kernel, mine.job.id)).state, 'succeeded');
    lib = (await kernel.store.getLibrary('/acme/bare-readme'))!;
    assert.equal(lib.title, 'Gauges (team copy)');
    assert.equal(lib.description, 'Gauges for dashboards.', "the source's description still fills what the user did not give");
  });

  test('GitLab: star_count of the URL-encoded project path', async (t) => {
    const kernel = await kernelFor(t);
    const { job } = await addLibrary(kernel, { source: 'git', id: '/group/tables', spec: { url: fx.url('group/sub/tables'), provider: 'gitlab' } });
    assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
    const lib = (await kernel.store.getLibrary('/group/tables'))!;
    assert.equal(lib.stars, 88);
    assert.equal(lib.title, 'Tables');
    assert.equal(lib.branch, 'main');
    assert.ok(gitlab.requests.some((r) => r.path === '/api/v4/projects/group%2Fsub%2Ftables'), JSON.stringify(gitlab.requests.map((r) => r.path)));
  });
});

describe('repoStatsRequest: which API is asked, and who gets the token', () => {
  const opts = { githubApiUrl: '', gitlabApiUrl: '', timeoutMs: 5000 };
  test('github.com asks api.github.com with the token; a GitHub Enterprise host is not asked without its API URL', () => {
    const gh = repoStatsRequest(parseGitUrl('https://github.com/honojs/website.git'), 'tok', opts)!;
    assert.equal(gh.url, 'https://api.github.com/repos/honojs/website');
    assert.equal(gh.headers.authorization, 'Bearer tok');
    assert.equal(repoStatsRequest(parseGitUrl('https://ghe.acme.dev/team/docs', 'github'), 'tok', opts), null, 'the token never goes to api.github.com for another host');
    assert.equal(repoStatsRequest(parseGitUrl('https://ghe.acme.dev/team/docs', 'github'), 'tok', { ...opts, githubApiUrl: 'https://ghe.acme.dev/api/v3/' })!.url, 'https://ghe.acme.dev/api/v3/repos/team/docs');
  });
  test('GitLab asks its own host with the URL-encoded path; Bitbucket, plain git and a 0 time limit ask nothing', () => {
    assert.equal(repoStatsRequest(parseGitUrl('https://gitlab.example.com/group/sub/repo.git', 'gitlab'), undefined, opts)!.url, 'https://gitlab.example.com/api/v4/projects/group%2Fsub%2Frepo');
    assert.equal(repoStatsRequest(parseGitUrl('https://bitbucket.org/a/b'), 'tok', opts), null);
    assert.equal(repoStatsRequest(parseGitUrl('https://git.example.com/a/b'), 'tok', opts), null);
    assert.equal(repoStatsRequest(parseGitUrl('https://github.com/a/b'), 'tok', { ...opts, timeoutMs: 0 }), null);
  });
});
