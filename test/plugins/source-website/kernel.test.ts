import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addLibrary, runIngestJob } from '../../../core/ingest.ts';
import { createKernel, type Kernel } from '../../../core/kernel.ts';
import { getContext } from '../../../core/query.ts';
import { createConsoleLogger } from '../../../core/services.ts';
import { hasCorpora } from '../../helpers/corpora.ts';
import { startSite, type TestSite } from './site.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const builtin = (name: string) => join(ROOT, 'plugins', name, 'index.ts');

function config(dir: string, name: string, network: string): string {
  const file = join(dir, name);
  writeFileSync(file, `plugins:
  - use: ${builtin('store-embedded')}
  - use: ${builtin('chunker-markdown')}
  - use: ${builtin('source-website')}
    options:
      website:
        delayMs: 0
        retries: 0
slots:
  store: embedded
  chunkers: [markdown]
${network}`);
  return file;
}

describe('a website library through the kernel', { skip: hasCorpora ? false : 'shared corpora not present' }, () => {
  let dir: string;
  let site: TestSite;
  const kernels: Kernel[] = [];
  const open = async (file: string, data: string) => {
    const k = await createKernel(file, { env: { dataDir: join(dir, data), mode: 'writer' }, logger: createConsoleLogger('error', () => {}) });
    await k.open();
    kernels.push(k);
    return k;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'refdesk-website-'));
    site = await startSite();
  });
  after(async () => {
    for (const k of kernels) await k.close();
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('an operator who allows 127.0.0.1 gets the site indexed and answerable, with page#section links', async () => {
    const kernel = await open(config(dir, 'allowed.yaml', 'network:\n  allowHosts: ["127.0.0.1"]\n'), 'data-allowed');
    const { library, job } = await addLibrary(kernel, { source: 'website', spec: { url: `${site.origin}/docs/`, maxPages: 12, exclude: ['/docs/slow'] } });
    const port = new URL(site.origin).port;
    assert.equal(library.id, `/websites/127_0_0_1_${port}_docs`);
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
    assert.equal(done.progress.files, 12);
    const log = (await kernel.store.getJobLog(job.id)).map((l) => l.message);
    assert.ok(log.some((m) => /Read robots\.txt/.test(m)));
    assert.ok(log.some((m) => /Read http:\/\/127\.0\.0\.1:\d+\/docs\/ -> docs\/index/.test(m)));

    const ctx = await getContext(kernel, { libraryId: library.id, query: 'routing with a path parameter' });
    assert.ok(ctx.snippets.length > 0);
    const top = ctx.snippets[0];
    assert.equal(top.sourcePath, 'docs/api/routing');
    // The best unit may be the "Path parameter" section alone or merged with the section before
    // it; its link points at the heading where its text starts.
    assert.ok(['basic', 'path-parameter'].includes(top.anchor!), `anchor ${top.anchor}`);
    assert.equal(top.sourceUrl, `${site.origin}/docs/api/routing#${top.anchor}`, 'the heading anchor of the page reaches the snippet');
    assert.ok(ctx.snippets.some((s) => s.type === 'code' && s.language === 'typescript'), 'code blocks keep their language');
    assert.ok(ctx.snippets.some((s) => s.anchor && s.sourceUrl!.endsWith(`#${s.anchor}`)));
  });

  test('the default network policy refuses the same crawl of 127.0.0.1 with a clear forbidden error', async () => {
    const kernel = await open(config(dir, 'default.yaml', ''), 'data-default');
    const before = site.hits.length;
    // Adding it is refused at once (the host is a literal loopback address), and nothing is stored.
    await assert.rejects(addLibrary(kernel, { source: 'website', spec: { url: `${site.origin}/docs/` } }), (e: any) =>
      e.code === 'forbidden' && /Refusing to fetch from "127\.0\.0\.1": it is a loopback address/.test(e.message),
    );
    assert.deepEqual(await kernel.store.listLibraries(), []);
    // A library stored before (say, under another policy) fails its job the same way: the guarded fetch checks again.
    await kernel.store.upsertLibrary({ id: '/websites/loopback_docs', title: 'loopback', description: '', branch: '', source: { kind: 'website', spec: { url: `${site.origin}/docs/` } } });
    const job = await kernel.store.createJob({ libraryId: '/websites/loopback_docs', version: '', kind: 'website' });
    const done = await runIngestJob(kernel, job.id);
    assert.equal(done.state, 'failed');
    assert.equal(done.error!.code, 'forbidden');
    assert.match(done.error!.message, /Refusing to fetch from "127\.0\.0\.1": it is a loopback address\. An operator can allow an internal host with network\.allowHosts/);
    assert.equal(site.hits.length, before, 'not a single request reached the site');
  });
});
