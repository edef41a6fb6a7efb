/**
 * The LLM reranker end to end: a real server (the API test helper) with llm-openai and
 * reranker-llm enabled as in config/default.yaml, the default config's network section (no
 * allowHosts: the admin-configured LLM on 127.0.0.1 must still be reached), and a loopback
 * OpenAI-compatible LLM set through PATCH /api/settings.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { createConsoleLogger } from '../../../core/services.ts';
import { LLM_SETTING } from '../../../core/settings.ts';
import { Tokens } from '../../../core/di-tokens.ts';
import type { Fetch } from '../../../core/contracts.ts';
import { supportBundleEntries } from '../../../server/support-bundle.ts';
import { adminAuth, call, indexUpload, qs, ROOT, startApiServer, writeDocs, type ApiServer } from '../../server/helpers/api-server.ts';
import { readRerankPrompt, startLoopbackLlm, type LoopbackBehaviour } from '../../helpers/loopback-llm.ts';
import { vendorError } from '../../helpers/vendor-llm-server.ts';

const PLANTED = 'sk-planted-rerank-9d2c4b7e1a3f5068';
const defaultYaml = parseYaml(readFileSync(join(ROOT, 'config/default.yaml'), 'utf8')) as { network: Record<string, unknown>; plugins: Array<{ use: string; options?: Record<string, unknown> }> };
const fromDefault = (folder: string) => defaultYaml.plugins.find((p) => p.use.includes(`/${folder}/`))!;

/** Pages about charts, each its own answer unit (one file, one section, prose with code). */
const page = (title: string, text: string, code: string) => `# ${title}\n\n${text} ${'It is part of the widgets chart toolkit. '.repeat(6)}\n\n\`\`\`js\n${code}\n\`\`\`\n`;
const DOCS = {
  'render.md': page('Render a chart', 'Call `widgets.chart(data)` to render a chart of the data into an element.', 'widgets.chart([1, 2, 3]).mount("#out");'),
  'colours.md': page('Chart colours', 'A chart takes a palette to render its series: `widgets.chart(data, { palette })`.', 'widgets.chart(data, { palette: "dark" });'),
  'axes.md': page('Chart axes', 'Render a chart with labelled axes: `widgets.chart(data, { axes })`.', 'widgets.chart(data, { axes: { x: "time" } });'),
  'export.md': page('Export a chart', 'Render a chart to an image with `chart.toPng()`.', 'const png = await widgets.chart(data).toPng();'),
};

describe('reranker-llm through the API', () => {
  let s: ApiServer;
  const logLines: string[] = [];
  let behaviour: LoopbackBehaviour = (p) => p.candidates.map((c) => c.n).reverse();
  let llm: Awaited<ReturnType<typeof startLoopbackLlm>>;

  const context = (p: Record<string, string>) => call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: '/docs/widgets', type: 'json', ...p }));
  const setLlm = (body: unknown) => call(s.base, 'PATCH', '/api/settings', { headers: adminAuth, json: { llm: body } });
  const titles = (r: { body: any }) => r.body.codeSnippets.map((c: any) => c.codeTitle);

  before(async () => {
    llm = await startLoopbackLlm(null, (p, c, n) => behaviour(p, c, n));
    s = await startApiServer({
      logger: createConsoleLogger('debug', (line) => logLines.push(line)),
      plugins: [{ use: join(ROOT, 'plugins/llm-openai/index.ts'), options: fromDefault('llm-openai').options }, { use: join(ROOT, 'plugins/reranker-llm/index.ts'), options: { llm: { ...(fromDefault('reranker-llm').options as any).llm, timeoutMs: 2500, cooldownMs: 0 } } }],
      config: { slots: { reranker: 'llm' }, network: defaultYaml.network },
    });
    await indexUpload(s.kernel, 'widgets', writeDocs(s.scratch, 'widgets', DOCS), { title: 'Widgets', description: 'Charts for the web' });
    await indexUpload(s.kernel, 'widgets-extra', writeDocs(s.scratch, 'widgets-extra', DOCS), { title: 'Widgets Extra', description: 'More widgets' });
  });
  after(async () => {
    await s.close();
    await llm.close();
  });

  test('the default network policy is in force (no allowHosts, no private networks) and still guards sources', async () => {
    assert.deepEqual(s.kernel.config.network.allowHosts, []);
    assert.equal(s.kernel.config.network.allowPrivateNetworks, false);
    const fetch = s.kernel.container.resolve(Tokens.Fetch) as Fetch;
    await assert.rejects(fetch.fetch(`${llm.origin}/v1/models`), 'a user-given URL on 127.0.0.1 is refused');
  });

  let lexical: { body: any; headers: Headers };
  test('without an LLM the reranker changes nothing: the answer equals fast=true, and no LLM is called', async () => {
    const plain = await context({ query: 'render a chart' });
    const fast = await context({ query: 'render a chart', fast: 'true' });
    assert.equal(plain.status, 200);
    assert.equal(plain.text, fast.text);
    assert.equal((await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: '/docs/widgets', query: 'render a chart' }))).text, (await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: '/docs/widgets', query: 'render a chart', fast: 'true' }))).text);
    assert.equal(llm.calls.length, 0);
    assert.ok(titles(plain).length >= 2, JSON.stringify(plain.body));
    lexical = plain;
  });

  test('with an LLM in Settings (no restart) one call reorders the snippets; the same question again is cached; fast=true skips it', async () => {
    const etagBefore = lexical.headers.get('etag');
    const r = await setLlm({ provider: 'custom', baseUrl: llm.baseUrl, model: 'loopback-ranker', apiKey: PLANTED });
    assert.equal(r.status, 200, r.text);
    const reranked = await context({ query: 'render a chart' });
    assert.equal(reranked.status, 200);
    assert.equal(llm.calls.length, 1);
    const call0 = llm.calls[0]!;
    assert.equal(call0.headers.authorization, `Bearer ${PLANTED}`);
    assert.equal(call0.body.model, 'loopback-ranker');
    assert.deepEqual(call0.body.response_format, { type: 'json_object' });
    const prompt = readRerankPrompt(call0);
    assert.equal(prompt.question, 'render a chart');
    assert.ok(prompt.candidates.length >= 2 && prompt.candidates.length <= 30, String(prompt.candidates.length));
    assert.notDeepEqual(titles(reranked), titles(lexical), 'the reversed ranking shows');
    assert.notEqual(reranked.headers.get('etag'), etagBefore, 'a provider change changes the answers\' ETag');

    const again = await context({ query: 'render a chart' });
    assert.equal(again.text, reranked.text);
    assert.equal(llm.calls.length, 1, 'cached per (library version, question, provider)');

    const fast = await context({ query: 'render a chart', fast: 'true' });
    assert.deepEqual(titles(fast), titles(lexical));
    assert.equal(llm.calls.length, 1);
  });

  test('a malformed answer, an id not in the list, a refusal, a slow reply or a refused key fall back to the lexical order, logged without the key', async () => {
    const cases: Array<[string, LoopbackBehaviour]> = [
      ['not json', () => ({ json: { id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Sure! The best is 2.' }, finish_reason: 'stop' }] } })],
      ['out of list', (p) => [p.candidates.length + 5, 1]],
      ['refusal', () => ({ json: { id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: 'I cannot help.' }, finish_reason: 'stop' }] } })],
      ['slow', (p) => ({ delayMs: 6000, json: { choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify({ ranking: p.candidates.map((c) => c.n) }) } }] } })],
      ['key refused', () => ({ status: 401, json: vendorError('openai', 401, `Incorrect API key provided: ${PLANTED}.`) })],
      ['server down', () => ({ status: 503, json: vendorError('openai', 503, 'overloaded') })],
    ];
    for (const [name, b] of cases) {
      behaviour = b;
      const before = llm.calls.length;
      const r = await context({ query: `render a chart (${name})` });
      assert.equal(r.status, 200, `${name}: ${r.text}`);
      assert.ok(llm.calls.length > before, `${name}: the LLM was asked`);
      const fast = await context({ query: `render a chart (${name})`, fast: 'true' });
      assert.equal(r.text, fast.text, `${name}: the lexical order`);
      assert.ok(!r.text.includes(PLANTED));
    }
    const warnings = logLines.filter((l) => l.includes('LLM reranking'));
    assert.ok(warnings.length >= cases.length, warnings.join('\n'));
    assert.ok(warnings.some((l) => /refused the API key/.test(l)), warnings.join('\n'));
    assert.ok(warnings.some((l) => /timeout|in time/.test(l)), warnings.join('\n'));
    assert.ok(!logLines.join('\n').includes(PLANTED), 'the key never reaches the log');
  });

  test('library search: one LLM call reorders the candidates; fast=true returns the fused order without it', async () => {
    behaviour = (p) => p.candidates.map((c) => c.n).reverse();
    const fast = await call(s.base, 'GET', '/api/v2/libs/search' + qs({ libraryName: 'widgets', query: 'render a chart', fast: 'true' }));
    const before = llm.calls.length;
    const slow = await call(s.base, 'GET', '/api/v2/libs/search' + qs({ libraryName: 'widgets', query: 'render a chart' }));
    assert.equal(fast.status, 200);
    assert.equal(slow.status, 200);
    assert.equal(llm.calls.length, before + 1);
    const ids = (r: { body: any }) => r.body.results.map((l: any) => l.id);
    assert.equal(ids(fast).length, 2);
    const prompt = readRerankPrompt(llm.calls.at(-1)!);
    assert.ok(prompt.candidates.every((c) => /\/docs\/widgets/.test(c.head)), JSON.stringify(prompt));
    // The LLM's answer (the reverse of the candidates it was shown) is the order served.
    assert.deepEqual(ids(slow), prompt.candidates.map((c) => /\((\/docs\/[^)]+)\)/.exec(c.head)![1]).reverse());
  });

  test('the key never reaches API answers, errors, job logs or the support bundle, even when the vendor echoes it', async () => {
    const view = await call(s.base, 'GET', '/api/settings', { headers: adminAuth });
    assert.ok(!view.text.includes(PLANTED));
    behaviour = () => ({ status: 401, json: vendorError('openai', 401, `Incorrect API key provided: ${PLANTED}`) });
    const check = await call(s.base, 'POST', '/api/settings/test', { headers: adminAuth });
    assert.match(check.text, /401/, "the check reached the loopback LLM");
    assert.ok(!check.text.includes(PLANTED), check.text);
    await indexUpload(s.kernel, 'widgets-more', writeDocs(s.scratch, 'widgets-more', DOCS));
    const jobs = await s.kernel.store.listJobs({ libraryId: '/docs/widgets-more', limit: 5 });
    assert.ok(jobs.length > 0);
    for (const job of jobs) assert.ok(!JSON.stringify(await s.kernel.store.getJobLog(job.id)).includes(PLANTED));
    const entries = await supportBundleEntries(s.kernel);
    for (const [name, text] of entries) assert.ok(!text.includes(PLANTED), `support bundle ${name}`);
    assert.ok(!logLines.join('\n').includes(PLANTED));
  });

  test('an LLM key that cannot be opened (sealed with another ENCRYPTION_KEY) leaves reranking off, never the answers', async () => {
    await s.kernel.store.setSetting(LLM_SETTING, { provider: 'custom', baseUrl: llm.baseUrl, model: 'm', apiKey: 'v1:not-a-sealed-value' });
    s.kernel.providers.invalidate();
    const before = llm.calls.length;
    const r = await context({ query: 'render a chart' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(titles(r), titles(lexical));
    const libs = await call(s.base, 'GET', '/api/v2/libs/search' + qs({ libraryName: 'widgets', query: 'chart' }));
    assert.equal(libs.status, 200, libs.text);
    assert.equal(llm.calls.length, before);
    assert.ok(logLines.some((l) => l.includes('LLM reranking off')), 'the operator is told');
  });

  test('clearing the LLM in Settings turns reranking off at once', async () => {
    const r = await setLlm(null);
    assert.equal(r.status, 200, r.text);
    const before = llm.calls.length;
    const plain = await context({ query: 'render a chart' });
    assert.deepEqual(titles(plain), titles(lexical));
    assert.equal(llm.calls.length, before);
  });
});
