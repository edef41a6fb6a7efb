/**
 * runPlugin builds a definition as the kernel does: options validated by the config loader's own
 * function (the same message), defaults filled in, each dependency a fake unless given.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import { loadConfig } from '../../core/config.ts';
import { definePlugin, defineChunker, defineReranker, defineSource } from '../../core/define.ts';
import { token } from '../../core/di.ts';
import { Tokens } from '../../core/di-tokens.ts';
import { ConfigError } from '../../core/errors.ts';
import { DEFAULT_NETWORK_POLICY } from '../../core/net/address-policy.ts';
import { runPlugin, runSource, MemoryStore } from '../../core/testing/index.ts';
import gitPlugin from '../../plugins/source-git/index.ts';
import rerankerPlugin from '../../plugins/reranker-llm/index.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'refdesk-run-plugin-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  assert.fail('expected a rejection');
}

test('bad options reject with the message a bad config gets at start-up (same function, same ajv), never a value', async () => {
  const bad = { maxFiles: 0, attempts: 'many', colour: 'hunter2-secret' };
  const file = join(dir, 'bad-git.yaml');
  writeFileSync(
    file,
    `plugins:
  - use: ${join(ROOT, 'plugins/store-embedded/index.ts')}
  - use: ${join(ROOT, 'plugins/chunker-markdown/index.ts')}
  - use: ${join(ROOT, 'plugins/source-git/index.ts')}
    options:
      git: ${JSON.stringify(bad)}
`,
  );
  const fromConfig = await rejection(loadConfig(file));
  assert.ok(fromConfig instanceof ConfigError, String(fromConfig));

  const fromKit = await rejection(runPlugin(gitPlugin, { kind: 'git', options: bad }));
  assert.ok(fromKit instanceof ConfigError, String(fromKit));
  assert.equal(fromKit.code, 'config_error');
  assert.equal(fromKit.message, 'plugin @refdesk/source-git: options.git: unknown property "colour"; options.git.maxFiles: must be >= 1; options.git.attempts: must be integer');
  // The config loader's message is the kit's, with the file and the plugin's place in the list.
  assert.equal(fromConfig.message, `${file}: ${fromKit.message.replaceAll('options.git', 'plugins[2].options.git')}`);
  assert.ok(!fromKit.message.includes('hunter2') && !fromKit.message.includes('many'));
});

test('a plugin for another kernel is refused as the config loader refuses it, with the same message', async () => {
  const future = definePlugin({ name: '@acme/future', version: '1.0.0', kernel: '^99.0.0', definitions: [defineChunker({ kind: 'future', description: 'test', options: Type.Object({}), deps: {}, create: () => ({ formats: ['markdown'], chunk: () => [] }) })] });
  const err = await rejection(runPlugin(future, { kind: 'future' }));
  assert.ok(err instanceof ConfigError, String(err));
  assert.match(err.message, /^plugin @acme\/future requires kernel \^99\.0\.0, but this Refdesk kernel is \d+\.\d+\.\d+/);
  const file = join(dir, 'future.yaml');
  const mod = join(dir, 'future-plugin.mjs');
  writeFileSync(mod, `export default { __refdeskPlugin: true, name: '@acme/future', version: '1.0.0', kernel: '^99.0.0', definitions: [] };\n`);
  writeFileSync(file, `plugins:\n  - use: ${mod}\n`);
  const fromConfig = await rejection(loadConfig(file));
  assert.ok(fromConfig.message.endsWith(err.message), `${fromConfig.message} / ${err.message}`);
});

test('valid options get their defaults, as create receives them from the kernel; the caller\'s object is not changed', async () => {
  const given = { maxFiles: 50 };
  const run = await runPlugin(gitPlugin, { kind: 'git', role: 'source', options: given });
  try {
    assert.deepEqual(given, { maxFiles: 50 });
    assert.equal(run.options.maxFiles, 50);
    assert.equal(run.options.attempts, 3);
    assert.equal(run.options.allowFileUrls, false);
    assert.equal(typeof run.instance.read, 'function');
    assert.deepEqual(Object.keys(run.deps).sort(), ['credentials', 'fetch', 'logger', 'policy']);
    assert.deepEqual(await (run.deps.credentials as { tokenFor(u: unknown): Promise<unknown> }).tokenFor({ transport: 'https', host: 'github.com', port: '' }), undefined);
    assert.equal(run.deps.policy, DEFAULT_NETWORK_POLICY);
  } finally {
    await run.close();
  }
});

// A plugin depending on every service the kit fakes.
const seen: Record<string, unknown>[] = [];
const probe = definePlugin({
  name: 'probe',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineSource({
      kind: 'probe',
      idPrefix: 'probe',
      options: Type.Object({ pages: Type.Integer({ minimum: 1, default: 2 }), label: Type.Optional(Type.String()) }, { additionalProperties: false }),
      specSchema: Type.Object({ name: Type.String() }),
      deps: { fetch: Tokens.Fetch, logger: Tokens.Logger, clock: Tokens.Clock, store: Tokens.Store, env: Tokens.Env, providers: Tokens.Providers },
      create(options, deps) {
        seen.push(deps);
        return {
          async *read(ctx) {
            for (let i = 1; i <= options.pages; i++) {
              ctx.signal.throwIfAborted();
              yield { path: `${ctx.spec.name}/${i}.md`, format: 'markdown', content: `# Page ${i} of ${options.label ?? 'none'}\n` };
            }
          },
        };
      },
    }),
    defineChunker({ kind: 'probe', options: Type.Object({}), deps: {}, create: () => ({ formats: ['text'], chunk: () => [] }) }),
  ],
});

test('each dependency is a working fake, chosen by its token; close() removes the data directory', async () => {
  const run = await runPlugin(probe, { kind: 'probe', role: 'source', options: { label: 'x' } });
  const { fetch, logger, clock, store, env, providers } = run.deps as Record<string, any>;
  assert.equal(fetch, run.fakes.fetch);
  await assert.rejects(fetch.fetch('https://docs.example.com/a'), /no route for GET https:\/\/docs\.example\.com\/a/);
  logger.info('hello');
  assert.deepEqual(run.fakes.logger.lines, [{ level: 'info', message: 'hello' }]);
  assert.equal(clock.now().toISOString(), '2026-01-01T00:00:00.000Z');
  assert.ok(store instanceof MemoryStore);
  await store.upsertLibrary({ id: '/probe/x', title: 'X', source: { kind: 'probe', spec: { name: 'x' } } });
  assert.equal((await store.getLibrary('/probe/x'))?.title, 'X');
  assert.equal(await providers.llm(), null);
  assert.equal(await providers.embedder(), run.fakes.embedder);
  assert.equal(env.mode, 'writer');
  assert.ok(run.dataDir && existsSync(run.dataDir) && env.dataDir === run.dataDir);

  const out = await runSource(run.instance, { name: 'n' });
  assert.deepEqual(out.documents.map((d) => d.path), ['n/1.md', 'n/2.md']);
  assert.match(out.documents[0].content, /of x/);
  await run.close();
  assert.ok(!existsSync(run.dataDir));
  await run.close(); // again: nothing to do
  await assert.rejects(store.getLibrary('/probe/x'), /closed|open/i);
});

test('deps replace fakes by the names the definition declares; unknown names and tokens without a fake are refused', async () => {
  const myFetch = { fetch: async () => new Response('# given\n') };
  const run = await runPlugin(probe, { kind: 'probe', role: 'source', deps: { fetch: myFetch } });
  assert.equal(run.deps.fetch, myFetch);
  assert.equal(run.dataDir !== null, true);
  await run.close();

  const unknown = await rejection(runPlugin(probe, { kind: 'probe', role: 'source', deps: { fetcher: myFetch } }));
  assert.match(unknown.message, /deps\.fetcher: the source "probe" declares no dependency "fetcher" \(it declares: fetch, logger, clock, store, env, providers\)/);

  const Vectors = token<{ size: number }>('acme.vectors');
  const needy = definePlugin({
    name: 'needy',
    version: '1.0.0',
    kernel: '^1.0.0',
    definitions: [defineReranker({ kind: 'needy', options: Type.Object({}), deps: { vectors: Vectors }, create: (_o, { vectors }) => ({ rerank: async (_q, hits, n) => hits.slice(0, Math.min(n, vectors.size)) }) })],
  });
  const missing = await rejection(runPlugin(needy, { kind: 'needy' }));
  assert.match(missing.message, /dependency "vectors" \(refdesk:acme\.vectors\) has no fake: pass it as deps\.vectors/);
  const ok = await runPlugin(needy, { kind: 'needy', role: 'reranker', deps: { vectors: { size: 1 } } });
  assert.equal((await ok.instance.rerank('q', [{ score: 1 } as never, { score: 0 } as never], 5)).length, 1);
  await ok.close();
});

test('a kind the plugin lacks, a kind in two roles without a role, and a non-plugin are refused clearly', async () => {
  assert.match((await rejection(runPlugin(probe, { kind: 'nope' }))).message, /plugin probe has no definition of kind "nope" \(it provides: source "probe", chunker "probe"\)/);
  assert.match((await rejection(runPlugin(probe, { kind: 'probe' }))).message, /2 definitions of kind "probe" \(source, chunker\): pass role/);
  assert.match((await rejection(runPlugin({ hello: 1 } as never, { kind: 'x' }))).message, /not a Refdesk plugin \(use definePlugin\)/);
  const chunker = await runPlugin(probe, { kind: 'probe', role: 'chunker' });
  assert.deepEqual(chunker.instance.formats, ['text']);
  assert.equal(chunker.dataDir, null, 'no Env asked for: no data directory made');
  await chunker.close();
});

test('a built-in reranker gets the fake Providers: with no LLM it keeps the lexical order', async () => {
  const run = await runPlugin(rerankerPlugin, { kind: 'llm', role: 'reranker' });
  try {
    assert.equal(run.options.candidates, 20);
    assert.equal(run.deps.providers, run.fakes.providers);
    assert.equal(await run.instance.active?.(), false);
  } finally {
    await run.close();
  }
});
