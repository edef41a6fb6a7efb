/**
 * `npm run bench --loopback-embedder`: the hybrid plumbing end to end (ingest embeds through the
 * loopback OpenAI-shaped server, the server process answers with fused search), on the tiny
 * synthetic corpus. The hash embedding is not a model: only the plumbing is checked.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeTinyBench } from './tiny-bench.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const bench = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'bench', 'run.ts'), ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_NO_WARNINGS: '1', ...env } });

test('npm run bench --loopback-embedder embeds at ingest and answers with hybrid search', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-bench-hybrid-'));
  let kept: string | undefined;
  try {
    const { corpora, questions } = writeTinyBench(dir);
    const out = join(dir, 'out');
    const res = bench(['--questions', questions, '--corpora', corpora, '--out', out, '--rounds', '1', '--loopback-embedder', '--keep']);
    assert.equal(res.status, 0, res.stderr + res.stdout);
    assert.match(res.stdout, /refdesk: hybrid search with loopback-hash \(a hashing embedder, not a model\)/);
    kept = /data directory kept: (.+)/.exec(res.stdout)?.[1]?.trim();
    assert.ok(kept && existsSync(join(kept, 'vectors')), 'the data directory has vectors');
    const builds = readdirSync(join(kept, 'vectors')).filter((n) => n !== 'libraries');
    assert.equal(builds.length, 2, 'one vector index per library');
    for (const b of builds) assert.equal(JSON.parse(readFileSync(join(kept, 'vectors', b, 'meta.json'), 'utf8')).model, 'loopback-hash');
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    assert.equal(summary.embedder, 'loopback-hash (a hashing embedder, not a model)');
    assert.equal(summary.systems.refdesk.macro['hit@1'], 1, 'the unambiguous questions are still answered first');
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (kept) rmSync(kept, { recursive: true, force: true });
  }
});

test('npm run bench refuses an embedder key given by a variable that is not set, and a model without a base URL', () => {
  const missing = bench(['--questions', 'x.jsonl', '--embedder-base-url', 'http://127.0.0.1:9/v1', '--embedder-model', 'm', '--embedder-key-env', 'REFDESK_TEST_UNSET_KEY_VAR'], { REFDESK_TEST_UNSET_KEY_VAR: '' });
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /--embedder-key-env names REFDESK_TEST_UNSET_KEY_VAR, which is not set/);
  const noBase = bench(['--questions', 'x.jsonl', '--embedder-model', 'm']);
  assert.equal(noBase.status, 1);
  assert.match(noBase.stderr, /need --embedder-base-url/);
});
