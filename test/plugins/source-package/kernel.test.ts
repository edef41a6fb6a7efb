import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addLibrary, runIngestJob } from '../../../core/ingest.ts';
import { getContext } from '../../../core/query.ts';
import { Tokens } from '../../../core/di-tokens.ts';
import { resolvePackageSource } from '../../../plugins/source-package/resolve-package.ts';
import { networkKernel } from '../../helpers/network-kernel.ts';
import { startNpmRegistry, startPypiIndex } from './registry.ts';

const DTS = `/**\n * Creates a store holding state.\n * @param initial - the first state\n */\nexport declare function createStore<T>(initial: T): Store<T>;\n/** A store. */\nexport interface Store<T> {\n    get(): T;\n    set(next: T): void;\n}\n`;

test('kernel: npm and PyPI libraries are added, ingested and answer questions; /packages/<name> resolves first', async (t) => {
  const npm = await startNpmRegistry(t, {
    '@demo/store': {
      versions: {
        '1.0.0': { files: { 'package.json': JSON.stringify({ types: 'index.d.ts' }), 'README.md': '# store\n\nA tiny state store.\n', 'index.d.ts': DTS } },
      },
    },
  });
  const pypi = await startPypiIndex(t, {
    'tiny-http': { '0.3': { description: '# tiny-http\n\nServe files.\n\n```python\nfrom tiny_http import serve\nserve(port=8000)\n```\n', contentType: 'text/markdown', sdist: { 'docs/config.md': '# Configuration\n\nSet TINY_PORT to change the port.\n' } } },
  });
  const options = { retryBaseDelayMs: 2 };
  const kernel = await networkKernel(t, { 'source-package': { npm: { ...options, npmRegistry: npm.base }, pypi: { ...options, pypiIndex: pypi.base }, packages: { ...options, npmRegistry: npm.base, pypiIndex: pypi.base } } });

  const added = await addLibrary(kernel, { source: 'npm', spec: { name: '@demo/store' } });
  assert.equal(added.library.id, '/npm/@demo/store');
  let done = await runIngestJob(kernel, added.job.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
  const log = (await kernel.store.getJobLog(added.job.id)).map((l) => l.message).join('\n');
  assert.match(log, /npm @demo\/store@1\.0\.0; latest 1\.0\.0, 1 version published/);
  let ctx = await getContext(kernel, { libraryId: '/npm/@demo/store', query: 'createStore initial state' });
  const api = ctx.snippets.find((s) => s.type === 'code' && s.title === 'createStore');
  assert.ok(api, ctx.snippets.map((s) => s.title).join(', '));
  assert.equal(api.code, 'export declare function createStore<T>(initial: T): Store<T>;');
  assert.match(api.description, /Creates a store holding state\./);
  assert.equal(api.sourcePath, 'index.d.ts');

  // /packages/<name>: the resolver picks the registry, the library keeps the /packages ID.
  const resolved = await resolvePackageSource('tiny_http', kernel.container.resolve(Tokens.Fetch), { npmRegistry: npm.base, pypiIndex: pypi.base, retry: { baseDelayMs: 1 } });
  assert.deepEqual(resolved, { kind: 'pypi', spec: { name: 'tiny-http' } });
  // The `packages` source does the same when the library is added, and keeps the answer.
  const pkg = await addLibrary(kernel, { source: 'packages', spec: { name: 'tiny_http' } });
  assert.equal(pkg.library.id, '/packages/tiny-http');
  assert.equal(pkg.library.source.kind, 'packages');
  assert.deepEqual(pkg.library.source.spec, { name: 'tiny-http', registry: 'pypi' });
  await assert.rejects(addLibrary(kernel, { source: 'packages', spec: { name: 'nowhere-at-all' } }), (e: any) => e.code === 'library_not_found' && /No npm package and no PyPI project/.test(e.message));
  assert.equal(await kernel.store.getLibrary('/packages/nowhere-at-all'), null, 'nothing is created when the name resolves nowhere');
  done = await runIngestJob(kernel, pkg.job.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
  ctx = await getContext(kernel, { libraryId: '/packages/tiny-http', query: 'change the port' });
  assert.ok(ctx.snippets.some((s) => s.sourcePath === 'docs/config.md'));

  // A package the registry does not know: the job fails with the registry's answer.
  const missing = await addLibrary(kernel, { source: 'npm', spec: { name: 'ghost' } });
  done = await runIngestJob(kernel, missing.job.id);
  assert.equal(done.state, 'failed');
  assert.equal(done.error?.code, 'library_not_found');
  assert.match(done.error!.message, /The npm package "ghost" was not found in the registry/);
});
