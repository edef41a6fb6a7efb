import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addLibrary, runIngestJob } from '../../../core/ingest.ts';
import { getContext } from '../../../core/query.ts';
import { readJobLog } from '../../../core/job-log.ts';
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

test('kernel: an llms.txt with good and bad links (refused address, 404, not text, too large, failing server) indexes the good ones and logs each bad one', async (t) => {
  const { startServer, send } = await import('../../helpers/route-server.ts');
  let base = '';
  const site = await startServer((_req, res, url) => {
    switch (url.pathname) {
      case '/llms.txt':
        return send(res, 200, [
          '# Gadget',
          '',
          '> Gadget docs.',
          '',
          '## Docs',
          '',
          `- [Install](${base}/install.md): how to install`,
          '- [Private](http://10.1.2.3/private.md): an address the policy refuses',
          `- [Missing](${base}/missing.md)`,
          `- [Logo](${base}/logo.png)`,
          `- [Huge](${base}/huge.md)`,
          `- [Down](${base}/down.md)`,
          `- [Configure](${base}/configure.md)`,
          '',
        ].join('\n'), 'text/plain');
      case '/install.md':
        return send(res, 200, '# Install\n\n## Install the gadget\n\nRun `gadget install --global` once.\n', 'text/markdown');
      case '/configure.md':
        return send(res, 200, '# Configure\n\n## Set the gadget colour\n\nCall `gadget.colour("teal")`.\n', 'text/markdown');
      case '/logo.png':
        return send(res, 200, Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'image/png');
      case '/huge.md':
        return send(res, 200, '# Huge\n\n' + 'word '.repeat(2000), 'text/markdown');
      case '/down.md':
        return send(res, 502, 'bad gateway');
      default:
        return send(res, 404, 'not found');
    }
  }, t);
  base = site.base;
  const kernel = await networkKernel(t, { 'source-llms-txt': { llmstxt: { retryBaseDelayMs: 1, retryAttempts: 2, maxPageBytes: 2000 } } });
  const { library, job } = await addLibrary(kernel, { source: 'llmstxt', name: 'gadget', spec: { url: `${base}/llms.txt` } });
  const done = await runIngestJob(kernel, job.id);
  assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
  assert.equal(done.progress.files, 3, 'the llms.txt and its two good pages');
  const warnings = (await kernel.store.getJobLog(job.id)).filter((l) => l.level === 'warn').map((l) => l.message);
  const expectWarning = (re: RegExp) => assert.ok(warnings.some((m) => re.test(m)), `${re}\n${warnings.join('\n')}`);
  expectWarning(/^skipped "Private" \(http:\/\/10\.1\.2\.3\/private\.md, line 8\): .*10\.1\.2\.3/);
  expectWarning(/^skipped "Missing" \(http:\/\/127\.0\.0\.1:\d+\/missing\.md, line 9\): .*HTTP 404/);
  expectWarning(/^skipped "Logo" \(http:\/\/127\.0\.0\.1:\d+\/logo\.png, line 10\): .*not a text document \(image\/png\)/);
  expectWarning(/^skipped "Huge" \(http:\/\/127\.0\.0\.1:\d+\/huge\.md, line 11\): larger than 2000 bytes/);
  expectWarning(/^skipped "Down" \(http:\/\/127\.0\.0\.1:\d+\/down\.md, line 12\): .*HTTP 502 Bad Gateway after 2 attempts/);
  // The job log's lines about one page carry its document path (GET /api/jobs/{id}/log shows it).
  const lines = await readJobLog(kernel.env.dataDir, job.id);
  const pathOf = (re: RegExp) => lines.find((l) => re.test(l.message))?.path;
  assert.equal(pathOf(/^skipped "Missing"/), 'missing.md', JSON.stringify(lines));
  assert.equal(pathOf(/^skipped "Down"/), 'down.md');
  assert.equal(pathOf(/^retrying \(attempt 2 of 2\).*502/), 'down.md', 'the retry of one page names it');
  for (const [query, code] of [['install the gadget', 'gadget install --global'], ['set the gadget colour', 'gadget.colour("teal")']]) {
    const ctx = await getContext(kernel, { libraryId: library.id, query });
    assert.ok(ctx.snippets.some((s) => (s.code + s.content).includes(code)), `${query}: ${ctx.snippets.map((s) => s.sourcePath).join(', ')}`);
  }
});
