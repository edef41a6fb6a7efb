import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addLibrary, runIngestJob } from '../../../core/ingest.ts';
import { getContext } from '../../../core/query.ts';
import { hasCorpora } from '../../helpers/corpora.ts';
import { networkKernel } from '../../helpers/network-kernel.ts';
import { startDenoSite } from './fixture-site.ts';

test('kernel: add an llms.txt library, ingest it, answer a question from a linked page', { skip: hasCorpora ? false : 'shared corpora not present' }, async (t) => {
  const site = await startDenoSite(t);
  const kernel = await networkKernel(t, { 'source-llms-txt': { llmstxt: { retryBaseDelayMs: 5 } } });
  const { library, job } = await addLibrary(kernel, { source: 'llmstxt', spec: { url: `${site.base}/llms.txt` } });
  assert.equal(library.id, `/llmstxt/127_0_0_1_${new URL(site.base).port}-llms.txt`);
  const done = await runIngestJob(kernel, job.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
  assert.equal(done.progress.files, 33);

  const log = (await kernel.store.getJobLog(job.id)).map((l) => `${l.level} ${l.message}`).join('\n');
  assert.match(log, /info llms\.txt "Deno": 36 links in 6 sections/);
  assert.match(log, /warn skipped "Style Guide"/);
  assert.match(log, /info Optional section: its 4 links are indexed/);

  const result = await getContext(kernel, { libraryId: library.id, query: 'deno deploy getting started' });
  assert.ok(result.snippets.length > 0);
  const paths = result.snippets.map((s) => s.sourcePath);
  assert.ok(paths.includes('deploy/getting_started'), paths.join(', '));
  const code = result.snippets.find((s) => s.type === 'code' && s.sourcePath === 'deploy/getting_started');
  assert.equal(code?.code, 'deno deploy --prod');
  assert.equal(code?.sourceUrl, `${site.base}/deploy/getting_started#html-deploy-getting-started`);
});

test('kernel: a failing llms.txt server ends the job with a clear error and serves nothing half-written', async (t) => {
  const { startServer, send } = await import('../../helpers/route-server.ts');
  const site = await startServer((_req, res) => send(res, 503, 'down'), t);
  const kernel = await networkKernel(t, { 'source-llms-txt': { llmstxt: { retryBaseDelayMs: 1, retryAttempts: 2 } } });
  const { library, job } = await addLibrary(kernel, { source: 'llmstxt', name: 'down', spec: { url: `${site.base}/llms.txt` } });
  const done = await runIngestJob(kernel, job.id);
  assert.equal(done.state, 'failed');
  assert.equal(done.error?.code, 'invalid_source');
  assert.match(done.error!.message, /answered HTTP 503 Service Unavailable after 2 attempts\. Try again later\./);
  assert.equal((await kernel.store.getVersion(library.id, ''))?.activeBuildId ?? null, null);
});
