/**
 * `refdesk context` reads the LLM of Settings from DATA_DIR as the server does: with a loopback
 * OpenAI-compatible LLM set (custom provider, on 127.0.0.1 under the default network policy)
 * the answer is reranked by it; --fast skips it; a failing LLM degrades to the lexical order
 * and its key never reaches the output.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createKernel } from '../../core/kernel.ts';
import { createConsoleLogger } from '../../core/services.ts';
import { applySettingsPatch } from '../../core/settings.ts';
import { makeDataDir, removeDataDir, ROOT, runRefdesk, stopAll, type CliResult } from './refdesk-process.ts';
import { startLoopbackLlm, type LoopbackBehaviour } from '../helpers/loopback-llm.ts';
import { vendorError } from '../helpers/vendor-llm-server.ts';

const PLANTED = 'sk-planted-cli-5b1e9c3a7d2f4086';
const page = (title: string, text: string) => `# ${title}\n\n${text} ${'It is part of the widgets chart toolkit. '.repeat(6)}\n\n\`\`\`js\nwidgets.chart(data, ${JSON.stringify(title)});\n\`\`\`\n`;

const ok = (r: CliResult) => assert.equal(r.code, 0, `exit ${r.code}\n${r.stdout}\n${r.stderr}`);
/** The answer's sections in rank order (code and info snippets together). */
const titles = (r: CliResult): string[] => {
  const body = JSON.parse(r.stdout) as { codeSnippets: Array<{ rank: number; breadcrumb: string }>; infoSnippets: Array<{ rank: number; breadcrumb: string }> };
  return [...body.codeSnippets, ...body.infoSnippets].sort((a, b) => a.rank - b.rank).map((s) => s.breadcrumb);
};

describe('refdesk context with an LLM in Settings', { timeout: 180_000 }, () => {
  let dir: string;
  let behaviour: LoopbackBehaviour = (p) => p.candidates.map((c) => c.n).reverse();
  let llm: Awaited<ReturnType<typeof startLoopbackLlm>>;

  before(async () => {
    dir = makeDataDir();
    const docs = join(dir, 'docs-src');
    mkdirSync(docs);
    writeFileSync(join(docs, 'render.md'), page('Render a chart', 'Call widgets.chart(data) to render a chart.'));
    writeFileSync(join(docs, 'colours.md'), page('Chart colours', 'A chart takes a palette to render its series.'));
    writeFileSync(join(docs, 'axes.md'), page('Chart axes', 'Render a chart with labelled axes.'));
    ok(await runRefdesk(['add', docs, '--name', 'widgets'], join(dir, 'data'), 120_000));
    llm = await startLoopbackLlm(null, (p, c, n) => behaviour(p, c, n));
    const kernel = await createKernel(join(ROOT, 'config/default.yaml'), { env: { dataDir: join(dir, 'data'), mode: 'writer' }, logger: createConsoleLogger('error', () => {}) });
    await kernel.open();
    try {
      await applySettingsPatch(kernel, { llm: { provider: 'custom', baseUrl: llm.baseUrl, model: 'loopback-ranker', apiKey: PLANTED } });
    } finally {
      await kernel.close();
    }
  });
  after(async () => {
    await stopAll();
    await llm?.close();
    removeDataDir(dir);
  });

  test('the answer is reranked by the LLM; --fast answers in the lexical order without calling it', async () => {
    const fast = await runRefdesk(['context', '/docs/widgets', 'render a chart', '--json', '--fast'], join(dir, 'data'));
    ok(fast);
    assert.equal(llm.calls.length, 0);
    const reranked = await runRefdesk(['context', '/docs/widgets', 'render a chart', '--json'], join(dir, 'data'));
    ok(reranked);
    assert.equal(llm.calls.length, 1);
    assert.equal(llm.calls[0]!.headers.authorization, `Bearer ${PLANTED}`);
    assert.ok(titles(fast).length >= 2, fast.stdout);
    assert.notDeepEqual(titles(reranked), titles(fast));
  });

  test('an LLM that refuses the key (and echoes it) degrades to the lexical order; the key is never printed', async () => {
    behaviour = () => ({ status: 401, json: vendorError('openai', 401, `Incorrect API key provided: ${PLANTED}`) });
    const r = await runRefdesk(['context', '/docs/widgets', 'render a chart', '--json'], join(dir, 'data'));
    ok(r);
    const fast = await runRefdesk(['context', '/docs/widgets', 'render a chart', '--json', '--fast'], join(dir, 'data'));
    assert.deepEqual(titles(r), titles(fast));
    assert.match(r.stderr, /refused the API key/);
    assert.ok(!r.stdout.includes(PLANTED) && !r.stderr.includes(PLANTED), r.stderr);
  });
});
