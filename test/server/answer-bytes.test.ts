/**
 * The context answers' bytes stay what they were while the serving path is made faster (issue 17):
 * a real corpus (koa, from ../shared/corpora) behind the real HTTP API with the search workers,
 * questions of the shared benchmark, both formats.
 *
 *   - each answer is byte-for-byte the answer the kernel gives in this thread with the store's
 *     own search (no worker, no catalog read from memory);
 *   - asked again (every catalog read from memory) and after writes to the database (a new key,
 *     a setting), the bytes and the ETag are the same;
 *   - the answers' SHA-256 equal the ones recorded in answer-bytes.golden.json. A change that
 *     is meant to change answers (ranking, assembly, formatting) records them again:
 *     REFDESK_UPDATE_ANSWER_BYTES=1 npx tsx test/run.ts test/server/answer-bytes.test.ts
 *     and says so in its commit.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKernel, type Kernel } from '../../core/kernel.ts';
import { createConsoleLogger } from '../../core/services.ts';
import { addLibrary, runIngestJob } from '../../core/ingest.ts';
import { getContext, toContextJson, toContextText } from '../../core/query.ts';
import { createApp, type RefdeskApp } from '../../server/app.ts';
import { listenOnLoopback } from '../helpers/listen.ts';
import { CORPORA_DIR, hasCorpora } from '../helpers/corpora.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const GOLDEN = fileURLToPath(new URL('./answer-bytes.golden.json', import.meta.url));
const QUESTIONS = join(CORPORA_DIR, '..', 'bench', 'questions.jsonl');
const LIBRARY = '/docs/koa';

/** The first questions of the shared benchmark about koa, and two short ones. */
function questions(): string[] {
  const asked = readFileSync(QUESTIONS, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { corpus: string; question: string })
    .filter((q) => q.corpus === 'koa')
    .slice(0, 6)
    .map((q) => q.question.slice(0, 480));
  return [...asked, 'ctx.throw status', 'nothing here matches xyzzy plugh'];
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('context answer bytes (issue 17: a faster serving path, the same answers)', { skip: !(hasCorpora && existsSync(QUESTIONS)) && 'needs ../shared/corpora and ../shared/bench' }, () => {
  let dir: string;
  let kernel: Kernel;
  let made: RefdeskApp;
  let server: Server;
  let base: string;
  let auth: Record<string, string>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'refdesk-answer-bytes-'));
    kernel = await createKernel(join(ROOT, 'config', 'default.yaml'), {
      env: { dataDir: join(dir, 'data'), mode: 'server', port: 0 },
      logger: createConsoleLogger('warn', () => {}),
    });
    await kernel.open();
    const { job } = await addLibrary(kernel, { source: 'upload', name: 'koa', spec: { path: join(CORPORA_DIR, 'koa') } });
    assert.equal((await runIngestJob(kernel, job.id)).state, 'succeeded');
    made = createApp(kernel, { searchPool: { size: 1 } });
    auth = { authorization: `Bearer ${(await made.service.createKey({ name: 'answer-bytes' })).key}` };
    server = createServer(made.app.callback());
    base = await listenOnLoopback(server);
  });

  after(async () => {
    server?.close();
    await made?.searchPool?.close();
    await kernel?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const ask = async (query: string, type: 'txt' | 'json') => {
    const res = await fetch(`${base}/api/v2/context?${new URLSearchParams({ libraryId: LIBRARY, query, type })}`, { headers: auth });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    // The headers Koa gave the text and the object bodies before the worker sent bytes.
    assert.equal(res.headers.get('content-type'), type === 'json' ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8');
    assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(text)));
    return { text, etag: res.headers.get('etag') };
  };

  /** The same question answered in this thread by the store's own search. */
  const local = async (query: string, type: 'txt' | 'json') => {
    const result = await getContext(kernel, { libraryId: LIBRARY, query });
    return type === 'txt' ? toContextText(result) : JSON.stringify(toContextJson(result));
  };

  test('over HTTP, through the search workers: the bytes of the in-process answer, again after reads from memory and after writes, and the recorded digests', async () => {
    const digests: Record<string, string> = {};
    const first = new Map<string, { text: string; etag: string | null }>();
    let nonEmpty = 0;
    for (const query of questions()) {
      if ((await getContext(kernel, { libraryId: LIBRARY, query })).snippets.length > 0) nonEmpty += 2;
      for (const type of ['txt', 'json'] as const) {
        const got = await ask(query, type);
        assert.equal(got.text, await local(query, type), `${type}: ${query}`);
        first.set(`${type} ${query}`, got);
        digests[`${type} ${query.slice(0, 60)}`] = sha(got.text);
      }
    }
    assert.ok(made.searchPool && made.searchPool.stats.searched >= 16, 'answered by the search workers');
    // Every answer with snippets came from the worker as bytes.
    assert.ok(nonEmpty >= 14, `the questions give ${nonEmpty / 2} non-empty answers`);
    assert.equal(made.searchPool.stats.encoded, nonEmpty, 'non-empty answers encoded by the worker');
    // An empty answer names its library: the worker sends no bytes and the text is made here.
    for (const type of ['txt', 'json'] as const) {
      assert.equal((await getContext(kernel, { libraryId: LIBRARY, query: 'qqzzxxjj' })).snippets.length, 0);
      assert.equal((await ask('qqzzxxjj', type)).text, await local('qqzzxxjj', type), `${type}: the empty answer`);
    }
    assert.equal(made.searchPool.stats.encoded, nonEmpty, 'an empty answer is not encoded by the worker');

    // Every catalog read now comes from memory; then the database changes under it.
    for (const step of ['again', 'after writes']) {
      if (step === 'after writes') {
        await made.service.createKey({ name: 'another' });
        await kernel.store.setSetting('mcp.requireKey', false);
      }
      for (const [key, was] of first) {
        const [type, ...rest] = key.split(' ');
        const got = await ask(rest.join(' '), type as 'txt' | 'json');
        assert.equal(got.text, was.text, `${step}: ${key}`);
        assert.equal(got.etag, was.etag, `${step}: the ETag of ${key}`);
      }
    }

    if (process.env.REFDESK_UPDATE_ANSWER_BYTES === '1') {
      writeFileSync(GOLDEN, JSON.stringify(digests, null, 2) + '\n');
      return;
    }
    assert.deepEqual(digests, JSON.parse(readFileSync(GOLDEN, 'utf8')), 'the answers changed: if that is meant, record them again (see the top of this file)');
  });
});
