import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ROOT, runRefdesk, startServer } from './refdesk-process.ts';
import { processDataDirs } from '../helpers/process-data-dirs.ts';
import { startNpmRegistry } from '../plugins/source-package/registry.ts';
import { configSources, guessUrlSource, resolveAddTarget } from '../../server/add-target.ts';
import { defaultConfigPath } from '../../core/config.ts';
import { gitFixture } from '../plugins/source-git/helpers.ts';
import { BASE_PLUGINS, writeTestConfig } from '../helpers/test-kernel.ts';

/** The default distribution's sources: a URL's kind is guessed among their URL matches. */
const sources = await configSources(defaultConfigPath());
const newDir = processDataDirs();

test('refdesk add guesses the source of a target; secrets come from the environment only', () => {
  const g = (u: string) => guessUrlSource(new URL(u), sources);
  assert.equal(g('https://github.com/honojs/website'), 'git');
  assert.equal(g('https://git.example.com/team/docs.git'), 'git');
  assert.equal(g('https://docs.deno.com/llms.txt'), 'llmstxt');
  assert.equal(g('https://example.com/llms-full.txt'), 'llmstxt');
  assert.equal(g('https://api.example.com/openapi.yaml'), 'openapi');
  assert.equal(g('https://petstore.swagger.io/v2/swagger.json'), 'openapi');
  assert.equal(g('https://acme.atlassian.net/wiki/spaces/ENG'), 'confluence');
  assert.equal(g('https://react.dev/learn'), 'website');
  const env = { REFDESK_GIT_TOKEN: 'ghp_secret', CONFLUENCE_API_TOKEN: 'atl_secret' };
  assert.deepEqual(resolveAddTarget('npm:@demo/store', { env, sources }), { source: 'npm', spec: { name: '@demo/store' } });
  assert.deepEqual(resolveAddTarget('pypi:requests', { env, sources }), { source: 'pypi', spec: { name: 'requests' } });
  assert.deepEqual(resolveAddTarget('https://github.com/a/b', { env, sources, flags: { branch: 'main' } }), { source: 'git', spec: { url: 'https://github.com/a/b', branch: 'main', token: 'ghp_secret' } });
  assert.deepEqual(resolveAddTarget('https://acme.atlassian.net/wiki', { env, sources, flags: { space: 'ENG', email: 'me@acme.io' } }), {
    source: 'confluence',
    spec: { siteUrl: 'https://acme.atlassian.net', spaceKey: 'ENG', apiToken: 'atl_secret', email: 'me@acme.io' },
  });
  assert.throws(() => resolveAddTarget('https://acme.atlassian.net/wiki', { env, sources }), /--space KEY/);
  assert.throws(() => resolveAddTarget('./no/such/folder', { env, sources }), /does not exist/);
  assert.throws(() => resolveAddTarget('', { env, sources }), /give a folder/);
});

test('refdesk add refuses file:// and other non-http(s) URLs at once, naming what to give; local paths stay uploads', () => {
  const env = {};
  assert.throws(() => resolveAddTarget('file:///srv/docs', { env, sources }), (e: Error) => /file:\/\/ URLs are not fetched; give the local path itself \(refdesk add \/srv\/docs\)/.test(e.message));
  assert.throws(() => resolveAddTarget('ftp://example.com/docs', { env, sources }), (e: Error) => /"ftp" URLs are not supported; give an http\(s\) URL/.test(e.message));
  assert.throws(() => resolveAddTarget('file:///srv/docs', { env, sources, source: 'website' }), /file:\/\/ URLs are not fetched/);
  assert.throws(() => resolveAddTarget('https://github.com/a/b/issues/1', { env, sources }), /names a page of the repository/);
  // git keeps its own transports (the server decides about file://)
  assert.deepEqual(resolveAddTarget('git@gitlab.com:group/sub/project.git', { env, sources }), { source: 'git', spec: { url: 'git@gitlab.com:group/sub/project.git' } });
  assert.equal(resolveAddTarget('ssh://git@github.com/a/b.git', { env, sources }).source, 'git');
  assert.equal(resolveAddTarget('file:///srv/git/a/b.git', { env, sources, source: 'git' }).source, 'git');
  assert.equal(resolveAddTarget(ROOT, { env, sources }).source, 'upload');
});

test('refdesk add of a git repository at a nested path: /group/sub/project, offline and through a running server', async () => {
  const fx = await gitFixture();
  try {
    fx.repo('platform/docs-team/handbook')
      .commit({ 'docs/deploy.md': '# Deploy\n\n## Roll back a release\n\nRun `handbook rollback --to previous` to roll back.\n' })
      .publish();
    fx.repo('platform/docs-team/runbook')
      .commit({ 'docs/pager.md': '# Pager\n\n## Silence an alert\n\nRun `runbook silence --for 1h` to silence an alert.\n' })
      .publish();
    const dataDir = newDir();
    const config = writeTestConfig(join(dataDir, 'refdesk.yaml'), [...BASE_PLUGINS, { use: 'plugins/source-git', options: { git: { retryDelayMs: 5 } } }], {
      network: { allowHosts: ['127.0.0.1'] },
    });
    const env = { REFDESK_CONFIG: config };
    const data = join(dataDir, 'data');
    const offline = await runRefdesk(['add', fx.url('platform/docs-team/handbook')], data, 60_000, env);
    assert.equal(offline.code, 0, offline.stderr);
    assert.match(offline.stdout, /^\/platform\/docs-team\/handbook: 1 files/m);
    const ctx = await runRefdesk(['context', '/platform/docs-team/handbook', 'roll back a release'], data, 60_000, env);
    assert.equal(ctx.code, 0, ctx.stderr);
    assert.match(ctx.stdout, /handbook rollback --to previous/);

    const server = await startServer(data, 30_000, env);
    const viaServer = await runRefdesk(['add', fx.url('platform/docs-team/runbook')], data, 60_000, env);
    assert.equal(viaServer.code, 0, viaServer.stderr);
    assert.match(viaServer.stdout, /^\/platform\/docs-team\/runbook: 1 files/m);
    const res = await fetch(`${server.base}/api/v2/context?libraryId=/platform/docs-team/runbook&query=silence+an+alert`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /runbook silence --for 1h/);
    await server.stop();
  } finally {
    await fx.close();
  }
});

test('refdesk add npm:<package> indexes it offline, and through a running server', async (t) => {
  const registry = await startNpmRegistry(t, {
    '@demo/store': { versions: { '1.0.0': { files: { 'package.json': '{}', 'README.md': '# store\n\nA tiny state store. Call `createStore()` to make one.\n' } } } },
  });
  const dataDir = newDir();
  const config = writeTestConfig(
    join(dataDir, 'refdesk.yaml'),
    [...BASE_PLUGINS, 'plugins/source-upload', { use: 'plugins/source-package', options: { npm: { npmRegistry: registry.base, retryBaseDelayMs: 5 } } }],
    { network: { allowHosts: ['127.0.0.1'] } },
  );
  const env = { REFDESK_CONFIG: config };
  const offline = await runRefdesk(['add', 'npm:@demo/store'], join(dataDir, 'data'), 60_000, env);
  assert.equal(offline.code, 0, offline.stderr);
  assert.match(offline.stdout, /^\/npm\/@demo\/store: 1 files, \d+ snippets/m);

  const bad = await runRefdesk(['add', 'https://127.0.0.1:9/docs', '--source', 'website'], join(dataDir, 'data'), 60_000, env);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /"website" source is not enabled/);

  const server = await startServer(join(dataDir, 'data'), 30_000, env);
  const viaServer = await runRefdesk(['add', 'npm:@demo/store', '--title', 'Demo store'], join(dataDir, 'data'), 60_000, env);
  assert.equal(viaServer.code, 0, viaServer.stderr);
  assert.match(viaServer.stderr, /sending the request to it on port/);
  assert.match(viaServer.stdout, /\/npm\/@demo\/store: 1 files, \d+ snippets \(finalized\)/);
  const res = await fetch(`${server.base}/api/v2/context?libraryId=/npm/@demo/store&query=createStore`);
  assert.equal(res.status, 200);
  assert.match(await res.text(), /createStore/);
  await server.stop();
});
