import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Kernel } from '../../../core/kernel.ts';
import { addLibrary, runIngestJob } from '../../../core/ingest.ts';
import { getContext } from '../../../core/query.ts';
import { gitFixture, type GitFixture } from './helpers.ts';
import { BASE_PLUGINS, openTestKernel, type TestKernel } from '../../helpers/test-kernel.ts';

const TOKEN = 'glpat-KernelLevelSecret-42424242';

describe('a git library through the kernel', () => {
  let fx: GitFixture;
  let dir: string;
  let tk: TestKernel;
  let kernel: Kernel;

  before(async () => {
    fx = await gitFixture({ 'acme/widgets.git': TOKEN });
    fx.repo('acme/widgets')
      .commit({
        'README.md': '# Widgets\n\nWidgets render dashboards.\n',
        'docs/configure.md': '# Configure\n\n## Set the refresh interval\n\nCall `setRefreshInterval` with milliseconds:\n\n```js\nwidgets.setRefreshInterval(5000);\n```\n',
      })
      .tag('v1.0.0')
      .commit({ 'docs/configure.md': '# Configure\n\n## Set the refresh cadence\n\nCall `setCadence` with seconds:\n\n```js\nwidgets.setCadence(5);\n```\n' })
      .publish();
    fx.repo('acme/gadgets')
      .commit({ 'docs/intro.md': '# Gadgets\n\nGadgets v1 use `gadget.start()`.\n' })
      .tag('v1.0.0')
      .commit({
        'docs/intro.md': '# Gadgets\n\nGadgets v2 use `gadget.launch()`.\n',
        'refdesk.json': JSON.stringify({ folders: ['docs'], previousVersions: [{ tag: 'v1.0.0' }, { tag: 'v0.0.1-missing' }] }),
      })
      .publish();
    fx.repo('group/sub/project')
      .commit({ 'docs/start.md': '# Start\n\nNested projects start with `project.boot()`.\n' })
      .tag('v2.0.0')
      .publish();
    fx.repo('acme/tools')
      .commit({ 'README.md': '# Tools\n\nThe readme mentions `readmeOnly()`.\n', 'docs/use.md': '# Use\n\nMain branch docs: `tools.useMain()`.\n' })
      .checkout('next', true)
      .commit({ 'docs/use.md': '# Use\n\nNext branch docs: `tools.useNext()`.\n', 'guide/other.md': '# Other\n\nOutside the folder: `otherGuide()`.\n' })
      .publish();
    tk = await openTestKernel({
      prefix: 'refdesk-git-kernel-',
      plugins: [...BASE_PLUGINS, { use: 'plugins/source-git', options: { git: { retryDelayMs: 5 } } }],
      sections: { slots: { store: 'embedded', chunkers: ['markdown'], embedder: null, reranker: null }, network: { allowHosts: ['127.0.0.1'] } },
    });
    ({ dir, kernel } = tk);
  });

  after(async () => {
    await tk?.close();
    await fx?.close();
  });

  test('addLibrary derives /owner/repo, the job indexes the private repository, getContext answers from it', async () => {
    const { library, job } = await addLibrary(kernel, { source: 'git', spec: { url: fx.url('acme/widgets'), token: TOKEN } });
    assert.equal(library.id, '/acme/widgets');
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    const ctx = await getContext(kernel, { libraryId: '/acme/widgets', query: 'how do I set the refresh cadence' });
    assert.ok(ctx.snippets.some((s) => s.code.includes('widgets.setCadence(5)')), 'the default branch is served');
    const log = await kernel.store.getJobLog(job.id);
    assert.ok(log.some((l) => /documentation files selected/.test(l.message)), 'progress lines reach the job record');
    assert.ok(!JSON.stringify(log).includes(TOKEN));
  });

  test('a repository at a nested path is /group/sub/project (not /sub/project), asked for with and without a pinned version', async () => {
    const { library, job } = await addLibrary(kernel, { source: 'git', spec: { url: fx.url('group/sub/project') } });
    assert.equal(library.id, '/group/sub/project');
    assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
    const ctx = await getContext(kernel, { libraryId: '/group/sub/project', query: 'how do nested projects start' });
    assert.equal(ctx.library.id, '/group/sub/project');
    assert.ok(ctx.snippets.some((s) => (s.code + s.content).includes('project.boot()')));
    const v = await addLibrary(kernel, { source: 'git', id: '/group/sub/project@v2.0.0', spec: { url: fx.url('group/sub/project') } });
    assert.equal((await runIngestJob(kernel, v.job.id)).state, 'succeeded');
    await assert.rejects(getContext(kernel, { libraryId: '/group/other/project', query: 'start' }), (e: any) => e.code === 'library_not_found' && /Library "\/group\/other\/project" \(or "\/group\/other" at version "project"\) not found/.test(e.message));
    for (const id of ['/group/sub/project@v2.0.0', '/group/sub/project/v2.0.0']) {
      const pinned = await getContext(kernel, { libraryId: id, query: 'start' });
      assert.equal(pinned.library.id, '/group/sub/project', id);
      assert.equal(pinned.version, 'v2.0.0', id);
    }
  });

  test('a .../tree/<branch>/<folder> URL is stored as the repository with that branch and folder, and only that folder is read', async () => {
    const { library, job } = await addLibrary(kernel, { source: 'git', spec: { url: `${fx.url('acme/tools')}/tree/next/docs`, provider: 'github' } });
    assert.equal(library.id, '/acme/tools');
    assert.deepEqual({ url: library.source.spec.url, branch: library.source.spec.branch, folder: library.source.spec.folder }, { url: fx.url('acme/tools'), branch: 'next', folder: 'docs' });
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    const ctx = await getContext(kernel, { libraryId: '/acme/tools', query: 'use docs readme other guide', tokens: 5000 });
    const code = ctx.snippets.map((s) => s.code + s.content).join('\n');
    assert.ok(code.includes('tools.useNext()'), 'the branch of the URL is read');
    assert.ok(!code.includes('useMain') && !code.includes('readmeOnly') && !code.includes('otherGuide'), code);
  });

  test('a tag is indexed as a version and served as /owner/repo/v1.0.0 and @v1.0.0', async () => {
    const { job } = await addLibrary(kernel, { source: 'git', id: '/acme/widgets/v1.0.0', spec: { url: fx.url('acme/widgets'), token: TOKEN } });
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    assert.deepEqual((await kernel.store.getLibrary('/acme/widgets'))?.versions, ['v1.0.0']);
    for (const id of ['/acme/widgets/v1.0.0', '/acme/widgets@v1.0.0']) {
      const ctx = await getContext(kernel, { libraryId: id, query: 'refresh interval' });
      assert.ok(ctx.snippets.some((s) => s.code.includes('setRefreshInterval(5000)')), id);
      assert.ok(!ctx.snippets.some((s) => s.code.includes('setCadence')), id);
    }
  });

  test('a wrong token fails the job with a clear error that does not contain it; the served version stays', async () => {
    const wrong = 'glpat-WrongWrongWrong-1111111';
    const { job } = await addLibrary(kernel, { source: 'git', id: '/acme/widgets', spec: { url: fx.url('acme/widgets'), token: wrong } });
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'failed');
    assert.equal(done.error?.code, 'unauthorized');
    assert.ok(!JSON.stringify(done).includes(wrong));
    assert.ok(!JSON.stringify(await kernel.store.getJobLog(job.id)).includes(wrong));
    const ctx = await getContext(kernel, { libraryId: '/acme/widgets', query: 'refresh cadence' });
    assert.ok(ctx.snippets.length > 0, 'the previous build is still served');
  });

  test('previousVersions in the repository config queue a job for each named tag, served once built', async () => {
    const { job } = await addLibrary(kernel, { source: 'git', spec: { url: fx.url('acme/gadgets') } });
    assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
    const log = (await kernel.store.getJobLog(job.id)).map((l) => l.message).join('\n');
    assert.match(log, /queued 1 more versions the source names: v1\.0\.0/);
    assert.match(log, /previousVersions names tags the repository does not have: v0\.0\.1-missing/);
    const queued = (await kernel.store.listJobs({ libraryId: '/acme/gadgets', state: 'queued' }));
    assert.deepEqual(queued.map((j) => j.version), ['v1.0.0']);
    assert.equal((await runIngestJob(kernel, queued[0].id)).state, 'succeeded');
    assert.deepEqual((await kernel.store.getLibrary('/acme/gadgets'))?.versions, ['v1.0.0']);
    const old = await getContext(kernel, { libraryId: '/acme/gadgets/v1.0.0', query: 'start a gadget' });
    assert.ok(old.snippets.some((s) => s.content.includes('gadget.start()')));
    // A second refresh of the default version queues nothing new: v1.0.0 is built.
    const again = await addLibrary(kernel, { source: 'git', id: '/acme/gadgets', spec: { url: fx.url('acme/gadgets') } });
    assert.equal((await runIngestJob(kernel, again.job.id)).state, 'succeeded');
    assert.deepEqual((await kernel.store.listJobs({ libraryId: '/acme/gadgets', state: 'queued' })).length, 0);
  });

  test('the token is not in the database file in clear', async () => {
    const lib = await kernel.store.getLibrary('/acme/widgets');
    assert.match(String(lib?.source.spec.token), /^rdk-secret:v1:/);
    await kernel.close();
    const dataDir = join(dir, 'data');
    for (const f of readdirSync(dataDir, { recursive: true }) as string[]) {
      if (!statSync(join(dataDir, f)).isFile()) continue;
      const bytes = readFileSync(join(dataDir, f));
      assert.ok(!bytes.includes(TOKEN), `${f} holds the token in clear`);
      assert.ok(!bytes.includes(Buffer.from(TOKEN, 'utf16le')), `${f} holds the token in UTF-16`);
    }
  });
});
