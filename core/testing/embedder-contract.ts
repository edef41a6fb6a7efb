/**
 * A reusable node:test suite for the Embedder contract (what an embedder plugin's connector
 * `connect(endpoint)` returns): every Embedder runs it.
 *
 *   runEmbedderContract('openai', async () => ({ embedder: connector.connect(endpoint), cleanup }));
 *
 * `makeEmbedder` returns a working embedder (against a loopback server shaped like the provider's
 * API, or a fake); `options.makeFailing`, when given, returns one whose provider fails (an error
 * status, a malformed reply), to check that embed rejects instead of answering in part.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Embedder } from '../contracts.ts';
import { cosineSimilarity } from './fakes.ts';
import { withFixture } from './fixture.ts';

export interface EmbedderFixture {
  embedder: Embedder;
  cleanup?(): Promise<void>;
}

export interface EmbedderContractOptions {
  /** An embedder whose provider fails: `embed` must reject with an Error. */
  makeFailing?: () => Promise<EmbedderFixture>;
  /** How many texts the batching test sends in one call (default 250: more than one batch of most providers). */
  manyTexts?: number;
}

const TEXTS = ['How do I install the package?', 'Configure the router with middleware.', 'const app = new Koa();'];

function vectorProblems(embedder: Embedder, vectors: unknown, count: number): string[] {
  if (!Array.isArray(vectors)) return [`embed() resolved with ${typeof vectors}, not an array`];
  const problems: string[] = [];
  if (vectors.length !== count) problems.push(`embed() gave ${vectors.length} vectors for ${count} texts`);
  vectors.forEach((v: unknown, i) => {
    if (!(v instanceof Float32Array)) problems.push(`vector #${i + 1} is not a Float32Array`);
    else if (v.length !== embedder.dimensions) problems.push(`vector #${i + 1} has ${v.length} numbers, not dimensions (${embedder.dimensions})`);
    else if (!v.every(Number.isFinite)) problems.push(`vector #${i + 1} holds a number that is not finite`);
    else if (v.every((x) => x === 0)) problems.push(`vector #${i + 1} is all zeros`);
  });
  return problems;
}

function same(a: Float32Array, b: Float32Array): boolean {
  return a.length === b.length && cosineSimilarity(a, b) > 0.999;
}

export function runEmbedderContract(name: string, makeEmbedder: () => Promise<EmbedderFixture>, options: EmbedderContractOptions = {}): void {
  const withEmbedder = (make: () => Promise<EmbedderFixture>, fn: (embedder: Embedder) => Promise<void>) => withFixture(make, (f) => fn(f.embedder));

  describe(`Embedder contract: ${name}`, () => {
    test('model is a non-empty string; dimensions a positive integer', () =>
      withEmbedder(makeEmbedder, async (e) => {
        await e.embed(['probe'], 'query'); // some embedders learn their dimensions from the first answer
        assert.ok(typeof e.model === 'string' && e.model !== '', 'model must be a non-empty string');
        assert.ok(Number.isInteger(e.dimensions) && e.dimensions > 0, `dimensions must be a positive integer, got ${String(e.dimensions)}`);
      }));

    test('embed() gives one finite Float32Array of `dimensions` numbers per text, for both purposes', () =>
      withEmbedder(makeEmbedder, async (e) => {
        for (const purpose of ['document', 'query'] as const) {
          const vectors = await e.embed([...TEXTS], purpose);
          assert.deepEqual(vectorProblems(e, vectors, TEXTS.length), [], `embed(texts, '${purpose}') breaks the Embedder contract`);
        }
      }));

    test('embed([]) resolves with no vectors', () =>
      withEmbedder(makeEmbedder, async (e) => {
        assert.deepEqual(await e.embed([], 'document'), []);
      }));

    test('vectors come in the order of the texts', () =>
      withEmbedder(makeEmbedder, async (e) => {
        const forward = await e.embed([...TEXTS], 'document');
        const backward = await e.embed([...TEXTS].reverse(), 'document');
        for (let i = 0; i < TEXTS.length; i++) {
          assert.ok(same(forward[i], backward[TEXTS.length - 1 - i]), `the vector of text #${i + 1} changed with its position: vectors must follow the texts' order`);
        }
      }));

    test('many texts in one call (batched as the embedder likes) still give one vector per text, in order', () =>
      withEmbedder(makeEmbedder, async (e) => {
        const count = options.manyTexts ?? 250;
        const texts = Array.from({ length: count }, (_, i) => `text number ${i}: ${TEXTS[i % TEXTS.length]}`);
        const vectors = await e.embed(texts, 'document');
        assert.deepEqual(vectorProblems(e, vectors, count), []);
        for (const i of [0, Math.floor(count / 2), count - 1]) {
          const [alone] = await e.embed([texts[i]], 'document');
          assert.ok(same(vectors[i], alone), `text #${i + 1} got another vector in a batch than alone`);
        }
      }));

    if (options.makeFailing) {
      const makeFailing = options.makeFailing;
      test('a failing provider makes embed() reject with an Error (no partial answer)', () =>
        withEmbedder(makeFailing, async (e) => {
          await assert.rejects(e.embed([...TEXTS], 'document'), (err: unknown) => {
            assert.ok(err instanceof Error, `embed() rejected with ${typeof err}, not an Error`);
            assert.ok(err.message.length > 0, 'the error has no message');
            return true;
          });
        }));
    }
  });
}
