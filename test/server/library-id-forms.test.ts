/**
 * The two ways of pinning a version, `/<version>` and `@<version>`, answer alike over HTTP, for
 * npm packages with and without a scope (issue 16: `/npm/ms@2.1.3` was reported to answer 404
 * where `/npm/ms/2.1.3` answered).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { createApp } from '../../server/app.ts';
import { startNpmRegistry } from '../plugins/source-package/registry.ts';
import { networkKernel } from '../helpers/network-kernel.ts';
import { listenOnLoopback } from '../helpers/listen.ts';

test('npm versions pinned as /npm/ms/2.1.3 and /npm/ms@2.1.3 (and scoped /npm/@scope/pkg@1.2.3) answer the same', async (t) => {
  const readme = (text: string) => ({ files: { 'package.json': '{}', 'README.md': `# pkg\n\n## Convert\n\n${text}\n` } });
  const npm = await startNpmRegistry(t, {
    ms: { versions: { '2.1.2': readme('Old: call `ms("2 days")` to convert durations.'), '2.1.3': readme('New: call `ms("3 days")` to convert durations.') } },
    '@scope/pkg': { versions: { '1.2.3': readme('Scoped: call `pkg.convert()` to convert.'), '1.3.0': readme('Scoped newer: call `pkg.convertAll()`.') } },
  });
  const kernel = await networkKernel(t, { 'source-package': { npm: { retryBaseDelayMs: 2, npmRegistry: npm.base } } });
  for (const [name, version] of [['ms', '2.1.3'], ['@scope/pkg', '1.2.3']]) {
    const lib = await addLibrary(kernel, { source: 'npm', spec: { name } });
    assert.equal((await runIngestJob(kernel, lib.job.id)).state, 'succeeded');
    const pinned = await addLibrary(kernel, { source: 'npm', id: `/npm/${name}@${version}`, spec: { name } });
    assert.equal(pinned.library.id, `/npm/${name}`);
    assert.equal((await runIngestJob(kernel, pinned.job.id)).state, 'succeeded');
  }
  const app = createApp(kernel);
  const http = createServer(app.app.callback());
  const base = await listenOnLoopback(http);
  t.after(async () => {
    await app.jobs.stop();
    http.close();
  });
  const ask = async (libraryId: string) => {
    const r = await fetch(`${base}/api/v2/context?${new URLSearchParams({ libraryId, query: 'convert', type: 'json' })}`);
    return { status: r.status, body: await r.text() };
  };
  const pairs: Array<[string, string, number, RegExp]> = [
    ['/npm/ms/2.1.3', '/npm/ms@2.1.3', 200, /ms\(\\"3 days\\"\)/],
    ['/npm/@scope/pkg/1.2.3', '/npm/@scope/pkg@1.2.3', 200, /pkg\.convert\(\)/],
    ['/npm/ms/9.9.9', '/npm/ms@9.9.9', 404, /Version \\"9\.9\.9\\" of library \\"\/npm\/ms\\" not found \(available: 2\.1\.3\)/],
    ['/npm/@scope/pkg/9.9.9', '/npm/@scope/pkg@9.9.9', 404, /\/npm\/@scope\/pkg/],
  ];
  // An unknown ID of three segments is named with both of its readings.
  const unknown = await ask('/group/sub/project');
  assert.equal(unknown.status, 404);
  assert.match(unknown.body, /Library \\"\/group\/sub\/project\\" \(or \\"\/group\/sub\\" at version \\"project\\"\) not found/);
  for (const [slash, at, status, body] of pairs) {
    const a = await ask(slash);
    const b = await ask(at);
    assert.equal(a.status, status, `${slash}: ${a.body}`);
    assert.deepEqual(b, a, `${at} answers as ${slash}`);
    assert.match(a.body, body, slash);
  }
});
