/**
 * Git tokens from the operator's settings (setting `git`): a private repository on a host the
 * settings name as a self-managed GitLab/GitHub host is read with that host's token, through the
 * kernel's real DI path; the token never reaches another host, argv, the job's log or its error,
 * and a settings change applies to the next job without a restart.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Kernel } from '../../../core/kernel.ts';
import { addLibrary, runIngestJob } from '../../../core/ingest.ts';
import { patchSettings } from '../../../core/settings.ts';
import { gitFixture, gitWrapper, type GitFixture } from './helpers.ts';
import { BASE_PLUGINS, openTestKernel, type TestKernel } from '../../helpers/test-kernel.ts';

const TOKEN = 'glpat-SettingsTokenSecret-7788';

describe('git tokens from the settings', () => {
  let fx: GitFixture;
  let tk: TestKernel;
  let kernel: Kernel;
  let hostPort: string;

  before(async () => {
    fx = await gitFixture({ 'team/private-docs.git': TOKEN });
    fx.repo('team/private-docs').commit({ 'docs/guide.md': '# Guide\n\n## Rotate the keys\n\nCall `vault.rotate()` every month.\n' }).publish();
    hostPort = new URL(fx.server.base).host;
    tk = await openTestKernel({
      prefix: 'refdesk-git-settings-',
      plugins: [...BASE_PLUGINS, { use: 'plugins/source-git', options: { git: { retryDelayMs: 5, attempts: 1 } } }],
      sections: { network: { allowHosts: ['127.0.0.1'] } },
    });
    ({ kernel } = tk);
  });

  after(async () => {
    await tk?.close();
    await fx?.close();
  });

  test('without a token the private repository fails; naming the host in the settings makes the next job succeed (no restart), token never in argv, log or store', async (t) => {
    const first = await addLibrary(kernel, { source: 'git', spec: { url: fx.url('team/private-docs') } });
    const failed = await runIngestJob(kernel, first.job.id);
    assert.equal(failed.state, 'failed');
    assert.equal(failed.error?.code, 'unauthorized');

    await patchSettings(kernel.store, kernel.secrets, { git: { hosts: [{ host: hostPort, provider: 'gitlab', token: TOKEN }] } });
    const stored = JSON.stringify(await kernel.store.getSetting('git'));
    assert.ok(!stored.includes(TOKEN), 'the token is sealed at rest');

    const wrapper = gitWrapper();
    t.after(() => wrapper.restore());
    const before = fx.server.requests.length;
    const second = await addLibrary(kernel, { source: 'git', id: first.library.id, spec: { url: fx.url('team/private-docs') } });
    const done = await runIngestJob(kernel, second.job.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    const sent = fx.server.requests.slice(before);
    assert.ok(sent.some((r) => r.auth && r.status === 200), 'the settings token was sent and accepted');
    const argv = readFileSync(wrapper.record, 'utf8');
    assert.match(argv, /clone/);
    for (const form of [TOKEN, Buffer.from(`oauth2:${TOKEN}`).toString('base64')]) {
      assert.ok(!argv.includes(form), 'not in argv');
      assert.ok(!JSON.stringify(await kernel.store.getJobLog(second.job.id)).includes(form), 'not in the job log');
      assert.ok(!JSON.stringify(await kernel.store.getLibrary(first.library.id)).includes(form), 'not in the library record');
    }
  });

  test('a token is sent only to the host it was given for: another port of the same address gets no Authorization', async () => {
    const otherPort = String(Number(new URL(fx.server.base).port) + 1);
    await patchSettings(kernel.store, kernel.secrets, { git: { hosts: [{ host: `127.0.0.1:${otherPort}`, provider: 'github', token: TOKEN }] } });
    const before = fx.server.requests.length;
    const { job } = await addLibrary(kernel, { source: 'git', id: '/team/private-docs', spec: { url: fx.url('team/private-docs') } });
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'failed');
    assert.equal(done.error?.code, 'unauthorized');
    assert.ok(fx.server.requests.slice(before).every((r) => !r.auth), 'no request carried credentials');
    assert.ok(!JSON.stringify(done).includes(TOKEN));
  });

  test("a library's own token wins over the settings' token", async () => {
    await patchSettings(kernel.store, kernel.secrets, { git: { hosts: [{ host: hostPort, provider: 'gitlab', token: 'glpat-WrongFromSettings-0000' }] } });
    const { job } = await addLibrary(kernel, { source: 'git', id: '/team/private-docs', spec: { url: fx.url('team/private-docs'), token: TOKEN } });
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
  });

  test('a host named as a self-managed GitLab reads its web-page URLs as GitLab does (.../-/tree/<branch>/<folder>)', async () => {
    const page = `${fx.server.base}/team/private-docs/-/tree/main/docs`;
    await patchSettings(kernel.store, kernel.secrets, { git: { hosts: [] } });
    const plain = await addLibrary(kernel, { source: 'git', spec: { url: page } }).then((r) => r.library.id, (e: Error) => e.message);
    assert.notEqual(plain, '/team/private-docs', 'an unnamed host is a plain git server');

    await patchSettings(kernel.store, kernel.secrets, { git: { hosts: [{ host: '127.0.0.1', provider: 'gitlab', token: TOKEN }] } });
    const { library, job } = await addLibrary(kernel, { source: 'git', spec: { url: page } });
    assert.equal(library.id, '/team/private-docs');
    assert.deepEqual({ url: library.source.spec.url, branch: library.source.spec.branch, folder: library.source.spec.folder, provider: library.source.spec.provider }, { url: fx.url('team/private-docs').replace(/\.git$/, ''), branch: 'main', folder: 'docs', provider: 'gitlab' });
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
  });
});
