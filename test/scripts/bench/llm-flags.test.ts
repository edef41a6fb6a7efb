/**
 * The bench's --llm-* flags: the plumbing end to end with a deterministic loopback LLM (not a
 * model: it ranks by shared words), and the rule that a key is only ever read from the
 * environment variable --llm-api-key names.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchLlmFrom } from '../../../scripts/bench/llm-flags.ts';
import { startLoopbackLlm } from '../../helpers/loopback-llm.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PLANTED = 'sk-planted-bench-0c7a3e91d5b24f68';

test('benchLlmFrom: the key comes from the named environment variable, never from the command line', () => {
  assert.equal(benchLlmFrom({}, {}), null);
  assert.deepEqual(benchLlmFrom({ 'llm-base-url': 'http://127.0.0.1:1/v1', 'llm-model': 'm' }, {}), { baseUrl: 'http://127.0.0.1:1/v1', model: 'm', apiKey: null, keyFrom: null });
  assert.deepEqual(benchLlmFrom({ 'llm-base-url': 'http://x/v1', 'llm-model': 'm', 'llm-api-key': 'MY_KEY' }, { MY_KEY: PLANTED }), { baseUrl: 'http://x/v1', model: 'm', apiKey: PLANTED, keyFrom: 'MY_KEY' });
  assert.throws(() => benchLlmFrom({ 'llm-base-url': 'http://x/v1', 'llm-model': 'm', 'llm-api-key': PLANTED.replace(/-/g, '_') + '!' }, {}), /NAME of an environment variable/);
  assert.throws(() => benchLlmFrom({ 'llm-base-url': 'http://x/v1', 'llm-model': 'm', 'llm-api-key': 'sk-abc123' }, {}), /never the key itself/);
  assert.throws(() => benchLlmFrom({ 'llm-base-url': 'http://x/v1', 'llm-model': 'm', 'llm-api-key': 'UNSET_VAR' }, {}), /UNSET_VAR: that environment variable is not set/);
  const pasted = 'abcdef0123456789abcdef0123456789';
  assert.throws(() => benchLlmFrom({ 'llm-base-url': 'http://x/v1', 'llm-model': 'm', 'llm-api-key': pasted }, {}), (e: Error) => !e.message.includes(pasted));
  assert.throws(() => benchLlmFrom({ 'llm-base-url': 'http://x/v1' }, {}), /needs --llm-model/);
  assert.throws(() => benchLlmFrom({ 'llm-model': 'm' }, {}), /go with --llm-base-url/);
});

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

test('npm run bench --llm-base-url: lexical (fast=true) and reranked systems, the loopback LLM asked once per question, no key anywhere', { timeout: 180_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-bench-llm-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const llm = await startLoopbackLlm(t);
  const corpora = join(dir, 'corpora');
  write(join(corpora, 'MANIFEST.json'), JSON.stringify({ corpora: [{ name: 'gamma', libraryId: '/acme/gamma', bytes: 0 }] }));
  const section = (title: string, text: string) => `# ${title}\n\n${text} ${'Gamma is a toolkit for pipelines. '.repeat(5)}\n\n\`\`\`sh\ngamma ${title.toLowerCase().replace(/\s+/g, '-')}\n\`\`\`\n`;
  write(join(corpora, 'gamma', 'run.md'), section('Run a pipeline', 'Start a pipeline run with the run command.'));
  write(join(corpora, 'gamma', 'retry.md'), section('Retry a step', 'A failed pipeline step is retried with backoff.'));
  write(join(corpora, 'gamma', 'cache.md'), section('Cache artifacts', 'Pipeline artifacts are cached between runs.'));
  const questions = join(dir, 'questions.jsonl');
  write(
    questions,
    [
      { id: 'g-1', library: '/acme/gamma', corpus: 'gamma', question: 'how do I retry a failed pipeline step', type: 'howto', gold: [{ path: 'retry.md', grade: 2 }] },
      { id: 'g-2', library: '/acme/gamma', corpus: 'gamma', question: 'cache pipeline artifacts between runs', type: 'howto', gold: [{ path: 'cache.md', grade: 2 }] },
    ]
      .map((q) => JSON.stringify(q))
      .join('\n') + '\n',
  );
  const out = join(dir, 'out');
  const args = ['--import', 'tsx', join(ROOT, 'scripts/bench/run.ts'), '--questions', questions, '--corpora', corpora, '--out', out, '--rounds', '1', '--llm-base-url', llm.baseUrl, '--llm-model', 'loopback-ranker', '--llm-api-key', 'BENCH_LLM_KEY'];
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, NODE_NO_WARNINGS: '1', BENCH_LLM_KEY: PLANTED }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 0, stderr + stdout);
  assert.match(stdout, /reranked \(loopback-ranker at http:\/\/127\.0\.0\.1:\d+\/v1\)/);
  assert.match(stdout, /reranked latency \(ms\)/);

  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
  assert.deepEqual(Object.keys(summary.systems).sort(), ['minisearch', 'refdesk', 'reranked']);
  assert.deepEqual(summary.llm, { baseUrl: llm.baseUrl, model: 'loopback-ranker', keyFrom: 'BENCH_LLM_KEY' });
  assert.equal(summary.systems.reranked.macro.n, 2);
  // One LLM call per question (the lexical run asks with fast=true and never reaches it).
  assert.equal(llm.calls.length, 2);
  assert.ok(llm.calls.every((c) => c.headers.authorization === `Bearer ${PLANTED}`));
  for (const text of [stdout, stderr, readFileSync(join(out, 'summary.json'), 'utf8'), readFileSync(join(out, 'questions.json'), 'utf8')]) assert.ok(!text.includes(PLANTED));
});
