import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, makeDataDir, removeDataDir, runRefdesk, startServer, stopAll } from './refdesk-process.ts';
import { startNpmRegistry } from '../plugins/source-package/registry.ts';
import { guessUrlSource, resolveAddTarget } from '../../server/add-target.ts';

const dirs: string[] = [];
after(async () => {
  await stopAll();
  for (const d of dirs) removeDataDir(d);
});

test('refdesk add guesses the source of a target; secrets come from the environment only', () => {
  const g = (u: string) => guessUrlSource(new URL(u));
  assert.equal(g('https://github.com/honojs/website'), 'git');
  assert.equal(g('https://git.example.com/team/docs.git'), 'git');
  assert.equal(g('https://docs.deno.com/llms.txt'), 'llmstxt');
  assert.equal(g('https://example.com/llms-full.txt'), 'llmstxt');
  assert.equal(g('https://api.example.com/openapi.yaml'), 'openapi');
  assert.equal(g('https://petstore.swagger.io/v2/swagger.json'), 'openapi');
  assert.equal(g('https://acme.atlassian.net/wiki/spaces/ENG'), 'confluence');
  assert.equal(g('https://react.dev/learn'), 'website');
  const env = { REFDESK_GIT_TOKEN: 'ghp_secret', CONFLUENCE_API_TOKEN: 'atl_secret' };
  assert.deepEqual(resolveAddTarget('npm:@demo/store', { env }), { source: 'npm', spec: { name: '@demo/store' } });
  assert.deepEqual(resolveAddTarget('pypi:requests', { env }), { source: 'pypi', spec: { name: 'requests' } });
  assert.deepEqual(resolveAddTarget('https://github.com/a/b', { env, branch: 'main' }), { source: 'git', spec: { url: 'https://github.com/a/b', branch: 'main', token: 'ghp_secret' } });
  assert.deepEqual(resolveAddTarget('https://acme.atlassian.net/wiki', { env, space: 'ENG', email: 'me@acme.io' }), {
    source: 'confluence',
    spec: { siteUrl: 'https://acme.atlassian.net', spaceKey: 'ENG', apiToken: 'atl_secret', email: 'me@acme.io' },
  });
  assert.throws(() => resolveAddTarget('https://acme.atlassian.net/wiki', { env }), /--space KEY/);
  assert.throws(() => resolveAddTarget('./no/such/folder', { env }), /does not exist/);
  assert.throws(() => resolveAddTarget('', { env }), /give a folder/);
});

test('refdesk add npm:<package> indexes it offline, and through a running server', async (t) => {
  const registry = await startNpmRegistry(t, {
    '@demo/store': { versions: { '1.0.0': { files: { 'package.json': '{}', 'README.md': '# store\n\nA tiny state store. Call `createStore()` to make one.\n' } } } },
  });
  const dataDir = makeDataDir();
  dirs.push(dataDir);
  const config = join(dataDir, 'refdesk.yaml');
  writeFileSync(
    config,
    [
      'plugins:',
      `  - use: ${JSON.stringify(join(ROOT, 'plugins/store-embedded/index.ts'))}`,
      `  - use: ${JSON.stringify(join(ROOT, 'plugins/chunker-markdown/index.ts'))}`,
      `  - use: ${JSON.stringify(join(ROOT, 'plugins/source-upload/index.ts'))}`,
      `  - use: ${JSON.stringify(join(ROOT, 'plugins/source-package/index.ts'))}`,
      `    options: { npm: { npmRegistry: ${JSON.stringify(registry.base)}, retryBaseDelayMs: 5 } }`,
      'network:',
      "  allowHosts: ['127.0.0.1']",
      '',
    ].join('\n'),
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
