/**
 * A reusable node:test suite for the Store contract: every Store implementation runs it.
 *
 *   runStoreContract('embedded', async () => ({ store, cleanup }));
 *
 * `makeStore` returns a fresh, empty store that is already open; `cleanup` releases it and its
 * data, and must also work when the test has already closed the store. The store's clock must
 * follow real time (a few tests wait a few milliseconds to order updates).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LibraryInput, Snippet, Store, StoredSnippet } from '../contracts.ts';

export interface StoreFixture {
  store: Store;
  cleanup(): Promise<void>;
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A snippet with every field set; override what the test cares about. */
export function sampleSnippet(overrides: Partial<Snippet> = {}): Snippet {
  return {
    type: 'info',
    title: 'Section',
    description: '',
    language: '',
    code: '',
    content: 'Some prose about the library.',
    breadcrumb: ['Guide', 'Section'],
    pageTitle: 'Guide',
    sourcePath: 'docs/guide.md',
    lineStart: 1,
    lineEnd: 3,
    tokens: 10,
    ...overrides,
  };
}

function lib(id: string, overrides: Partial<LibraryInput> = {}): LibraryInput {
  return { id, title: `Title of ${id}`, source: { kind: 'upload', spec: { name: id } }, ...overrides };
}

/** Builds and finalizes a version with these snippets; returns the build id. */
async function buildVersion(store: Store, libraryId: string, version: string, snippets: Snippet[], jobId: string | null = null): Promise<string> {
  const buildId = await store.beginBuild(libraryId, version, jobId);
  await store.addSnippets(buildId, snippets);
  await store.finalizeBuild(buildId);
  return buildId;
}

function contents(snippets: StoredSnippet[]): string[] {
  return snippets.map((s) => s.content);
}

function errorCode(code: string): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.equal((err as { code?: unknown }).code, code, `expected error code ${code}, got ${String((err as Error)?.message ?? err)}`);
    assert.ok(typeof (err as Error).message === 'string' && (err as Error).message.length > 0);
    return true;
  };
}

export function runStoreContract(name: string, makeStore: () => Promise<StoreFixture>): void {
  async function withStore(fn: (store: Store) => Promise<void>): Promise<void> {
    const fixture = await makeStore();
    try {
      await fn(fixture.store);
    } finally {
      await fixture.cleanup();
    }
  }

  describe(`Store contract: ${name}`, () => {
    describe('catalog', () => {
      test('upsertLibrary creates a library with defaults; getLibrary returns it', () =>
        withStore(async (store) => {
          const created = await store.upsertLibrary(lib('/docs/koa', { description: 'Koa docs', stars: 5 }));
          assert.equal(created.id, '/docs/koa');
          assert.equal(created.title, 'Title of /docs/koa');
          assert.equal(created.description, 'Koa docs');
          assert.equal(created.branch, '');
          assert.equal(created.state, 'initial');
          assert.equal(created.lastUpdateDate, null);
          assert.equal(created.totalSnippets, 0);
          assert.equal(created.totalTokens, 0);
          assert.equal(created.stars, 5);
          assert.equal(created.trustScore, 0);
          assert.equal(created.benchmarkScore, 0);
          assert.deepEqual(created.versions, []);
          assert.deepEqual(created.source, { kind: 'upload', spec: { name: '/docs/koa' } });
          assert.match(created.createdAt, ISO_MS);
          assert.deepEqual(await store.getLibrary('/docs/koa'), created);
        }));

      test('upsertLibrary updates descriptive fields and keeps createdAt and builds', () =>
        withStore(async (store) => {
          const first = await store.upsertLibrary(lib('/docs/koa'));
          await buildVersion(store, '/docs/koa', '', [sampleSnippet({ content: 'kept' })]);
          const updated = await store.upsertLibrary({
            id: '/docs/koa',
            title: 'Koa',
            description: 'Next generation web framework',
            branch: 'master',
            source: { kind: 'github', spec: { repo: 'koajs/koa' } },
            stars: 35000,
            trustScore: 9.5,
            benchmarkScore: 80,
          });
          assert.equal(updated.createdAt, first.createdAt);
          assert.equal(updated.title, 'Koa');
          assert.equal(updated.description, 'Next generation web framework');
          assert.equal(updated.branch, 'master');
          assert.deepEqual(updated.source, { kind: 'github', spec: { repo: 'koajs/koa' } });
          assert.equal(updated.stars, 35000);
          assert.equal(updated.trustScore, 9.5);
          assert.equal(updated.benchmarkScore, 80);
          assert.equal(updated.state, 'finalized');
          assert.equal(updated.totalSnippets, 1);
          assert.deepEqual(contents(await store.getSnippets('/docs/koa', '')), ['kept']);
        }));

      test('listLibraries lists every library; getLibrary of an unknown id is null', () =>
        withStore(async (store) => {
          assert.deepEqual(await store.listLibraries(), []);
          await store.upsertLibrary(lib('/docs/b'));
          await store.upsertLibrary(lib('/docs/a'));
          await store.upsertLibrary(lib('/docs/b', { title: 'B again' }));
          const all = await store.listLibraries();
          assert.deepEqual(all.map((l) => l.id).sort(), ['/docs/a', '/docs/b']);
          assert.equal(all.find((l) => l.id === '/docs/b')?.title, 'B again');
          assert.equal(await store.getLibrary('/docs/missing'), null);
        }));

      test('deleteLibrary removes the library, its versions, builds and snippets; false when unknown', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/gone'));
          await store.upsertLibrary(lib('/docs/stays'));
          await buildVersion(store, '/docs/gone', '', [sampleSnippet({ content: 'gone default' })]);
          await buildVersion(store, '/docs/gone', 'v1', [sampleSnippet({ content: 'gone v1' })]);
          await buildVersion(store, '/docs/stays', '', [sampleSnippet({ content: 'stays' })]);
          assert.equal(await store.deleteLibrary('/docs/gone'), true);
          assert.equal(await store.getLibrary('/docs/gone'), null);
          assert.equal(await store.getVersion('/docs/gone', ''), null);
          assert.deepEqual(await store.listVersions('/docs/gone'), []);
          await assert.rejects(store.getSnippets('/docs/gone', ''), errorCode('library_not_found'));
          await assert.rejects(store.search('/docs/gone', 'v1', 'gone', 5), errorCode('library_not_found'));
          assert.deepEqual((await store.listLibraries()).map((l) => l.id), ['/docs/stays']);
          assert.deepEqual(contents(await store.getSnippets('/docs/stays', '')), ['stays']);
          assert.equal(await store.deleteLibrary('/docs/gone'), false);
          assert.equal(await store.deleteLibrary('/docs/never'), false);
          // The id can be used again from scratch.
          const again = await store.upsertLibrary(lib('/docs/gone'));
          assert.equal(again.state, 'initial');
          assert.deepEqual(again.versions, []);
        }));
      test('deleteLibrary(id, version) removes that version only: builds, snippets, jobs; false when unknown', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/multi'));
          await buildVersion(store, '/docs/multi', '', [sampleSnippet({ content: 'default words' })]);
          await buildVersion(store, '/docs/multi', 'v1', [sampleSnippet({ content: 'version one words' })]);
          await buildVersion(store, '/docs/multi', 'v2', [sampleSnippet({ content: 'version two words' })]);
          const queuedV1 = await store.createJob({ libraryId: '/docs/multi', version: 'v1', kind: 'upload' });
          const jobV2 = await store.createJob({ libraryId: '/docs/multi', version: 'v2', kind: 'upload' });
          assert.equal(await store.deleteLibrary('/docs/multi', 'v1'), true);
          assert.equal(await store.getVersion('/docs/multi', 'v1'), null);
          await assert.rejects(store.getSnippets('/docs/multi', 'v1'), errorCode('version_not_found'));
          assert.equal(await store.getJob(queuedV1.id), null);
          assert.equal(await store.claimJob(queuedV1.id), null);
          assert.deepEqual((await store.getLibrary('/docs/multi'))?.versions, ['v2']);
          assert.deepEqual(contents(await store.getSnippets('/docs/multi', '')), ['default words']);
          assert.deepEqual(contents(await store.getSnippets('/docs/multi', 'v2')), ['version two words']);
          assert.equal((await store.getJob(jobV2.id))?.state, 'queued');
          assert.equal(await store.deleteLibrary('/docs/multi', 'v1'), false);
          assert.equal(await store.deleteLibrary('/docs/multi', 'v9'), false);
          assert.equal(await store.deleteLibrary('/docs/none', 'v1'), false);
          // The default version alone: the library stays, with nothing served by default.
          assert.equal(await store.deleteLibrary('/docs/multi', ''), true);
          await assert.rejects(store.getSnippets('/docs/multi', ''), errorCode('version_not_found'));
          assert.deepEqual((await store.getLibrary('/docs/multi'))?.versions, ['v2']);
        }));

      test('deleteLibrary refuses while a job of the library (or that version) runs; queued jobs go with it', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/busy'));
          await buildVersion(store, '/docs/busy', 'v1', [sampleSnippet({ content: 'one' })]);
          const running = await store.createJob({ libraryId: '/docs/busy', version: '', kind: 'upload' });
          await store.claimJob(running.id);
          await assert.rejects(store.deleteLibrary('/docs/busy'), errorCode('library_busy'));
          await assert.rejects(store.deleteLibrary('/docs/busy', ''), errorCode('library_busy'));
          assert.ok(await store.getLibrary('/docs/busy'));
          assert.equal((await store.getJob(running.id))?.state, 'running');
          // Another version is not busy.
          assert.equal(await store.deleteLibrary('/docs/busy', 'v1'), true);
          await store.updateJob(running.id, { state: 'failed', error: { code: 'invalid_source', message: 'bad' } });
          const queued = await store.createJob({ libraryId: '/docs/busy', version: '', kind: 'upload' });
          assert.equal(await store.deleteLibrary('/docs/busy'), true);
          assert.equal(await store.getJob(queued.id), null);
          assert.equal(await store.claimJob(queued.id), null);
          assert.deepEqual(await store.listJobs({ libraryId: '/docs/busy' }), []);
        }));
    });

    describe('versions and builds', () => {
      test('the default version and pinned versions coexist, each with its own snippets', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/koa'));
          await buildVersion(store, '/docs/koa', '', [sampleSnippet({ content: 'head 1', tokens: 3 }), sampleSnippet({ content: 'head 2', tokens: 4 })]);
          await buildVersion(store, '/docs/koa', 'v1', [sampleSnippet({ content: 'one', tokens: 5 })]);
          await buildVersion(store, '/docs/koa', 'v2', [sampleSnippet({ content: 'two a' }), sampleSnippet({ content: 'two b' }), sampleSnippet({ content: 'two c' })]);

          assert.deepEqual(contents(await store.getSnippets('/docs/koa', '')), ['head 1', 'head 2']);
          assert.deepEqual(contents(await store.getSnippets('/docs/koa', 'v1')), ['one']);
          assert.deepEqual(contents(await store.getSnippets('/docs/koa', 'v2')), ['two a', 'two b', 'two c']);

          const record = await store.getLibrary('/docs/koa');
          assert.equal(record?.state, 'finalized');
          assert.deepEqual(record?.versions, ['v2', 'v1']);
          assert.equal(record?.totalSnippets, 2);
          assert.equal(record?.totalTokens, 7);
          assert.match(record?.lastUpdateDate ?? '', ISO_MS);

          const v1 = await store.getVersion('/docs/koa', 'v1');
          assert.equal(v1?.libraryId, '/docs/koa');
          assert.equal(v1?.version, 'v1');
          assert.equal(v1?.state, 'finalized');
          assert.equal(v1?.totalSnippets, 1);
          assert.equal(v1?.totalTokens, 5);
          assert.ok(v1?.activeBuildId);
          const versions = await store.listVersions('/docs/koa');
          assert.deepEqual(versions.map((v) => v.version).sort(), ['', 'v1', 'v2']);
          assert.equal(await store.getVersion('/docs/koa', 'v9'), null);
          assert.equal(await store.getVersion('/docs/unknown', ''), null);

          // Rebuilding one version leaves the others alone.
          await buildVersion(store, '/docs/koa', 'v1', [sampleSnippet({ content: 'one again' })]);
          assert.deepEqual(contents(await store.getSnippets('/docs/koa', 'v1')), ['one again']);
          assert.deepEqual(contents(await store.getSnippets('/docs/koa', '')), ['head 1', 'head 2']);
          assert.deepEqual(contents(await store.getSnippets('/docs/koa', 'v2')), ['two a', 'two b', 'two c']);
        }));

      test('pinned versions are listed newest first', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/semver'));
          for (const v of ['v1.9.0', 'v1.10.0', 'v2.0.0', 'v1.2']) await buildVersion(store, '/docs/semver', v, [sampleSnippet()]);
          assert.deepEqual((await store.getLibrary('/docs/semver'))?.versions, ['v2.0.0', 'v1.10.0', 'v1.9.0', 'v1.2']);
        }));

      test('a rebuild is served only once it is finalized; the old build is then dropped', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/koa'));
          await buildVersion(store, '/docs/koa', '', [sampleSnippet({ content: 'old alpha' }), sampleSnippet({ content: 'old beta' })]);
          const before = await store.getVersion('/docs/koa', '');
          const oldIds = (await store.getSnippets('/docs/koa', '')).map((s) => s.id);

          const next = await store.beginBuild('/docs/koa', '', null);
          assert.notEqual(next, before?.activeBuildId);
          await store.addSnippets(next, [sampleSnippet({ content: 'new zebracorn' })]);
          // Staged: the old build is still what is served.
          assert.deepEqual(contents(await store.getSnippets('/docs/koa', '')), ['old alpha', 'old beta']);
          assert.deepEqual(await store.search('/docs/koa', '', 'zebracorn', 10), []);
          assert.equal((await store.getVersion('/docs/koa', ''))?.activeBuildId, before?.activeBuildId);
          assert.equal((await store.getLibrary('/docs/koa'))?.totalSnippets, 2);

          const finalized = await store.finalizeBuild(next);
          assert.equal(finalized.activeBuildId, next);
          assert.equal(finalized.state, 'finalized');
          assert.equal(finalized.totalSnippets, 1);
          assert.equal(finalized.totalTokens, 10);
          assert.match(finalized.lastUpdateDate ?? '', ISO_MS);
          const served = await store.getSnippets('/docs/koa', '');
          assert.deepEqual(contents(served), ['new zebracorn']);
          for (const s of served) assert.ok(!oldIds.includes(s.id), 'snippet ids are not reused across builds');
          assert.equal((await store.search('/docs/koa', '', 'zebracorn', 10))[0]?.snippet.content, 'new zebracorn');
          assert.deepEqual(await store.search('/docs/koa', '', 'alpha', 10), []);
          assert.equal((await store.getLibrary('/docs/koa'))?.totalSnippets, 1);
          // A finalized build takes no more changes.
          await assert.rejects(store.addSnippets(next, [sampleSnippet()]), errorCode('invalid_request'));
        }));

      test('failBuild discards the staged build; the served build is untouched', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/koa'));
          const served = await buildVersion(store, '/docs/koa', '', [sampleSnippet({ content: 'served' })]);
          const staged = await store.beginBuild('/docs/koa', '', null);
          await store.addSnippets(staged, [sampleSnippet({ content: 'staged quokka' })]);
          await store.failBuild(staged);
          assert.deepEqual(contents(await store.getSnippets('/docs/koa', '')), ['served']);
          assert.deepEqual(await store.search('/docs/koa', '', 'quokka', 10), []);
          const version = await store.getVersion('/docs/koa', '');
          assert.equal(version?.activeBuildId, served);
          assert.equal(version?.totalSnippets, 1);
          assert.equal((await store.getLibrary('/docs/koa'))?.state, 'finalized');
          await assert.rejects(store.finalizeBuild(staged), errorCode('invalid_request'));
        }));

      test('document records follow their build: served after finalize, dropped on fail and rebuild', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/koa'));
          assert.equal((await store.getDocuments('/docs/koa', '')).size, 0);
          assert.equal((await store.getDocuments('/docs/unknown', '')).size, 0);
          const doc = (path: string, hash: string) => ({ path, hash, meta: { etag: `"${hash}"` }, chunker: 'c1' });
          const b1 = await store.beginBuild('/docs/koa', '', null);
          await store.addSnippets(b1, [sampleSnippet()]);
          await store.addDocuments(b1, [doc('a.md', 'h1'), doc('b.md', 'h2')]);
          await store.addDocuments(b1, [doc('b.md', 'h3')]);
          assert.equal((await store.getDocuments('/docs/koa', '')).size, 0, 'a staged build is not served');
          await store.finalizeBuild(b1);
          const served = await store.getDocuments('/docs/koa', '');
          assert.deepEqual([...served.values()].sort((x, y) => x.path.localeCompare(y.path)), [doc('a.md', 'h1'), doc('b.md', 'h3')]);
          const b2 = await store.beginBuild('/docs/koa', '', null);
          await store.addSnippets(b2, [sampleSnippet()]);
          await store.addDocuments(b2, [doc('c.md', 'h4')]);
          await store.failBuild(b2);
          assert.deepEqual([...(await store.getDocuments('/docs/koa', '')).keys()].sort(), ['a.md', 'b.md']);
          const b3 = await store.beginBuild('/docs/koa', '', null);
          await store.addSnippets(b3, [sampleSnippet()]);
          await store.addDocuments(b3, [doc('c.md', 'h4')]);
          await store.finalizeBuild(b3);
          assert.deepEqual([...(await store.getDocuments('/docs/koa', '')).keys()], ['c.md']);
          await assert.rejects(store.addDocuments(b3, [doc('d.md', 'h5')]), errorCode('invalid_request'));
        }));

      test('a failed first build leaves the version without snippets', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/koa'));
          const b = await store.beginBuild('/docs/koa', 'v1', null);
          await store.addSnippets(b, [sampleSnippet()]);
          await store.failBuild(b);
          await assert.rejects(store.getSnippets('/docs/koa', 'v1'), errorCode('version_not_found'));
          assert.deepEqual((await store.getLibrary('/docs/koa'))?.versions, []);
        }));

      test('beginBuild requires the library; unknown build ids are refused', () =>
        withStore(async (store) => {
          await assert.rejects(store.beginBuild('/docs/missing', '', null), errorCode('library_not_found'));
          await assert.rejects(store.addSnippets('no-such-build', [sampleSnippet()]), errorCode('invalid_request'));
          await assert.rejects(store.finalizeBuild('no-such-build'), errorCode('invalid_request'));
          await assert.rejects(store.failBuild('no-such-build'), errorCode('invalid_request'));
        }));
    });

    describe('snippets and search', () => {
      test('getSnippets returns document order and round-trips every field', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/koa'));
          const code = sampleSnippet({
            type: 'code',
            title: 'Create an app',
            description: 'Create a Koa application and listen.',
            language: 'js',
            code: "const app = new Koa();\napp.listen(3000);\n\t// tab, unicode: é ✓",
            content: '',
            breadcrumb: ['Koa', 'Getting started', 'Hello world'],
            pageTitle: 'Koa',
            sourcePath: 'docs/index.md',
            sourceUrl: 'https://koajs.com/#hello-world',
            anchor: 'hello-world',
            lineStart: 10,
            lineEnd: 14,
            tokens: 17,
          });
          const info = sampleSnippet({ title: 'Context', content: 'A Koa Context *encapsulates* the request.', breadcrumb: [], lineStart: 20, lineEnd: 20, tokens: 8 });
          const b = await store.beginBuild('/docs/koa', '', null);
          await store.addSnippets(b, [code, info]);
          await store.addSnippets(b, []);
          await store.addSnippets(b, [sampleSnippet({ content: 'third' }), sampleSnippet({ content: 'fourth' })]);
          await store.finalizeBuild(b);

          const got = await store.getSnippets('/docs/koa', '');
          assert.equal(got.length, 4);
          assert.deepEqual(contents(got).slice(2), ['third', 'fourth']);
          for (let i = 1; i < got.length; i++) assert.ok(got[i].seq > got[i - 1].seq, 'seq increases in document order');
          assert.equal(new Set(got.map((s) => s.id)).size, 4, 'ids are unique');
          for (const s of got) assert.equal(typeof s.id, 'number');

          const { id: _codeId, seq: _codeSeq, ...codeBack } = got[0];
          assert.deepEqual(codeBack, code);
          const { id: _infoId, seq: _infoSeq, ...infoBack } = got[1];
          assert.equal(infoBack.sourceUrl, undefined);
          assert.equal(infoBack.anchor, undefined);
          assert.deepEqual({ ...infoBack, sourceUrl: undefined, anchor: undefined }, { ...info, sourceUrl: undefined, anchor: undefined });
          assert.deepEqual(got[1].breadcrumb, []);
          assert.equal(got[1].lineStart, 20);
          assert.equal(got[1].lineEnd, 20);

          const totals = await store.getVersion('/docs/koa', '');
          assert.equal(totals?.totalSnippets, 4);
          assert.equal(totals?.totalTokens, 17 + 8 + 10 + 10);
        }));

      test('search finds a snippet by a distinctive word, best first, at most limit hits', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/koa'));
          const filler = Array.from({ length: 30 }, (_, i) =>
            sampleSnippet({ title: `Topic ${i}`, content: `General text about middleware number ${i}.` }),
          );
          await buildVersion(store, '/docs/koa', '', [
            ...filler.slice(0, 15),
            sampleSnippet({ title: 'Cookies', content: 'Set a signed cookie with the flibbertigibbet option.' }),
            ...filler.slice(15),
          ]);
          const hits = await store.search('/docs/koa', '', 'flibbertigibbet', 5);
          assert.ok(hits.length >= 1 && hits.length <= 5);
          assert.equal(hits[0].snippet.title, 'Cookies');
          assert.match(hits[0].snippet.content, /flibbertigibbet/);
          assert.equal(typeof hits[0].score, 'number');

          const many = await store.search('/docs/koa', '', 'middleware', 3);
          assert.ok(many.length > 0 && many.length <= 3);
          for (let i = 1; i < many.length; i++) assert.ok(many[i - 1].score >= many[i].score, 'best first');
          for (const h of many) assert.equal(typeof h.snippet.id, 'number');
        }));

      test('search reads the requested version only', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/koa'));
          await buildVersion(store, '/docs/koa', 'v1', [sampleSnippet({ content: 'legacy generator middleware' })]);
          await buildVersion(store, '/docs/koa', 'v2', [sampleSnippet({ content: 'async function middleware' })]);
          const v1 = await store.search('/docs/koa', 'v1', 'generator', 10);
          assert.equal(v1.length, 1);
          assert.deepEqual(await store.search('/docs/koa', 'v2', 'generator', 10), []);
        }));

      test('not-found errors: unknown library, unbuilt pinned version, default version still processing', () =>
        withStore(async (store) => {
          await assert.rejects(store.getSnippets('/docs/missing', ''), (err: Error) => {
            errorCode('library_not_found')(err);
            assert.match(err.message, /\/docs\/missing/);
            return true;
          });
          await assert.rejects(store.search('/docs/missing', '', 'x', 5), errorCode('library_not_found'));

          await store.upsertLibrary(lib('/docs/koa'));
          await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
          await assert.rejects(store.getSnippets('/docs/koa', ''), errorCode('library_not_finalized'));
          await assert.rejects(store.search('/docs/koa', '', 'x', 5), errorCode('library_not_finalized'));

          await buildVersion(store, '/docs/koa', '', [sampleSnippet()]);
          await assert.rejects(store.getSnippets('/docs/koa', 'v3'), errorCode('version_not_found'));
          await assert.rejects(store.search('/docs/koa', 'v3', 'x', 5), errorCode('version_not_found'));
        }));
    });

    describe('jobs', () => {
      test('createJob and updateJob keep state, progress, error and timestamps', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/koa'));
          const job = await store.createJob({ libraryId: '/docs/koa', version: 'v1', kind: 'upload' });
          assert.equal(typeof job.id, 'string');
          assert.equal(job.libraryId, '/docs/koa');
          assert.equal(job.version, 'v1');
          assert.equal(job.kind, 'upload');
          assert.equal(job.state, 'queued');
          assert.deepEqual(job.progress, {});
          assert.equal(job.error, null);
          assert.match(job.createdAt, ISO_MS);
          assert.equal(job.startedAt, null);
          assert.equal(job.finishedAt, null);
          assert.deepEqual(await store.getJob(job.id), job);

          const running = await store.updateJob(job.id, { state: 'running' });
          assert.equal(running.state, 'running');
          assert.match(running.startedAt ?? '', ISO_MS);
          assert.equal(running.finishedAt, null);

          const progressed = await store.updateJob(job.id, { progress: { files: 3, bytes: 1200, message: 'reading' } });
          assert.equal(progressed.state, 'running');
          assert.equal(progressed.startedAt, running.startedAt);
          assert.deepEqual(progressed.progress, { files: 3, bytes: 1200, message: 'reading' });

          const failed = await store.updateJob(job.id, { state: 'failed', error: { code: 'no_documentation', message: 'No docs found.' } });
          assert.equal(failed.state, 'failed');
          assert.deepEqual(failed.error, { code: 'no_documentation', message: 'No docs found.' });
          assert.match(failed.finishedAt ?? '', ISO_MS);
          assert.equal(failed.startedAt, running.startedAt);
          assert.deepEqual(await store.getJob(job.id), failed);

          const other = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
          await store.updateJob(other.id, { state: 'running' });
          const done = await store.updateJob(other.id, { state: 'succeeded', progress: { snippets: 12 } });
          assert.equal(done.state, 'succeeded');
          assert.equal(done.error, null);
          assert.equal(done.progress.snippets, 12);
          assert.match(done.finishedAt ?? '', ISO_MS);
        }));

      test('job logs keep lines in order with increasing seq', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/koa'));
          const job = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
          assert.deepEqual(await store.getJobLog(job.id), []);
          await store.appendJobLog(job.id, 'info', 'started');
          await store.appendJobLog(job.id, 'warn', 'skipped docs/big.bin: binary');
          await store.appendJobLog(job.id, 'error', 'failed');
          const log = await store.getJobLog(job.id);
          assert.deepEqual(
            log.map((l) => [l.level, l.message]),
            [['info', 'started'], ['warn', 'skipped docs/big.bin: binary'], ['error', 'failed']],
          );
          for (let i = 1; i < log.length; i++) assert.ok(log[i].seq > log[i - 1].seq);
          for (const l of log) assert.match(l.at, ISO_MS);
        }));

      test('listJobs lists newest first and filters by library, state and limit', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/a'));
          await store.upsertLibrary(lib('/docs/b'));
          const a1 = await store.createJob({ libraryId: '/docs/a', version: '', kind: 'upload' });
          const b1 = await store.createJob({ libraryId: '/docs/b', version: '', kind: 'upload' });
          const a2 = await store.createJob({ libraryId: '/docs/a', version: 'v1', kind: 'upload' });
          await store.updateJob(a1.id, { state: 'running' });
          await store.updateJob(a1.id, { state: 'succeeded' });

          assert.deepEqual((await store.listJobs()).map((j) => j.id), [a2.id, b1.id, a1.id]);
          assert.deepEqual((await store.listJobs({ libraryId: '/docs/a' })).map((j) => j.id), [a2.id, a1.id]);
          assert.deepEqual((await store.listJobs({ state: 'queued' })).map((j) => j.id), [a2.id, b1.id]);
          assert.deepEqual((await store.listJobs({ libraryId: '/docs/a', state: 'succeeded' })).map((j) => j.id), [a1.id]);
          assert.deepEqual((await store.listJobs({ limit: 2 })).map((j) => j.id), [a2.id, b1.id]);
          assert.deepEqual(await store.listJobs({ libraryId: '/docs/none' }), []);
        }));

      test('claimJob takes a queued job once: queued -> running; null when not queued or unknown', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/koa'));
          const job = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
          // Twenty claims at once: exactly one wins.
          const claims = await Promise.all(Array.from({ length: 20 }, () => store.claimJob(job.id)));
          const won = claims.filter((c) => c !== null);
          assert.equal(won.length, 1);
          assert.equal(won[0]!.id, job.id);
          assert.equal(won[0]!.state, 'running');
          assert.match(won[0]!.startedAt ?? '', ISO_MS);
          assert.equal(won[0]!.finishedAt, null);
          assert.deepEqual(await store.getJob(job.id), won[0]);
          assert.equal(await store.claimJob(job.id), null);
          await store.updateJob(job.id, { state: 'succeeded' });
          assert.equal(await store.claimJob(job.id), null);
          assert.equal((await store.getJob(job.id))?.state, 'succeeded');
          assert.equal(await store.claimJob('no-such-job'), null);
          // A job queued again (e.g. after a restart) can be claimed again.
          const other = await store.createJob({ libraryId: '/docs/koa', version: 'v1', kind: 'upload' });
          await store.updateJob(other.id, { state: 'running' });
          assert.equal(await store.claimJob(other.id), null);
          await store.updateJob(other.id, { state: 'queued' });
          assert.equal((await store.claimJob(other.id))?.state, 'running');
        }));

      test('unknown job ids: getJob is null, updates and logs are refused', () =>
        withStore(async (store) => {
          assert.equal(await store.getJob('no-such-job'), null);
          await assert.rejects(store.updateJob('no-such-job', { state: 'running' }), errorCode('invalid_request'));
          await assert.rejects(store.appendJobLog('no-such-job', 'info', 'x'), errorCode('invalid_request'));
          await assert.rejects(store.getJobLog('no-such-job'), errorCode('invalid_request'));
          await assert.rejects(store.createJob({ libraryId: '/docs/missing', version: '', kind: 'upload' }), errorCode('library_not_found'));
        }));
    });

    describe('state derivation', () => {
      test('a library follows its newest job until its default version is finalized', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/koa'));
          const state = async () => (await store.getLibrary('/docs/koa'))?.state;
          assert.equal(await state(), 'initial');

          const j1 = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
          assert.equal(await state(), 'processing');
          assert.equal((await store.getVersion('/docs/koa', ''))?.state, 'processing');
          await store.updateJob(j1.id, { state: 'running' });
          assert.equal(await state(), 'processing');
          await store.updateJob(j1.id, { state: 'failed', error: { code: 'no_documentation', message: 'none' } });
          assert.equal(await state(), 'error');
          assert.equal((await store.getVersion('/docs/koa', ''))?.state, 'error');
          await assert.rejects(store.getSnippets('/docs/koa', ''), errorCode('library_not_finalized'));

          const j2 = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
          await store.updateJob(j2.id, { state: 'running' });
          assert.equal(await state(), 'processing');
          await store.updateJob(j2.id, { state: 'interrupted', error: { code: 'interrupted', message: 'stopped' } });
          assert.equal(await state(), 'error');

          const j3 = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
          await store.updateJob(j3.id, { state: 'running' });
          await buildVersion(store, '/docs/koa', '', [sampleSnippet()], j3.id);
          await store.updateJob(j3.id, { state: 'succeeded' });
          assert.equal(await state(), 'finalized');
          assert.equal((await store.getVersion('/docs/koa', ''))?.state, 'finalized');

          // A refresh in progress or failing does not take a finalized library offline.
          const j4 = await store.createJob({ libraryId: '/docs/koa', version: '', kind: 'upload' });
          assert.equal(await state(), 'finalized');
          await store.updateJob(j4.id, { state: 'failed', error: { code: 'too_large', message: 'too big' } });
          assert.equal(await state(), 'finalized');
          assert.equal((await store.getSnippets('/docs/koa', '')).length, 1);
        }));

      test('a library with only pinned versions is finalized and reports the latest pinned build', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/docs/pinned'));
          await buildVersion(store, '/docs/pinned', 'v1', [sampleSnippet({ tokens: 1 })]);
          await new Promise((r) => setTimeout(r, 5));
          await buildVersion(store, '/docs/pinned', 'v2', [sampleSnippet({ tokens: 2 }), sampleSnippet({ tokens: 3 })]);
          const record = await store.getLibrary('/docs/pinned');
          assert.equal(record?.state, 'finalized');
          assert.deepEqual(record?.versions, ['v2', 'v1']);
          assert.equal(record?.totalSnippets, 2);
          assert.equal(record?.totalTokens, 5);
          assert.equal(record?.lastUpdateDate, (await store.getVersion('/docs/pinned', 'v2'))?.lastUpdateDate);
        }));
    });

    describe('settings, API keys and aliases', () => {
      test('settings hold JSON values; undefined removes them; bad keys are refused', () =>
        withStore(async (store) => {
          assert.equal(await store.getSetting('mcp.requireKey'), undefined);
          await store.setSetting('mcp.requireKey', true);
          await store.setSetting('policy', { sourceTypes: { websites: false }, list: ['/a/b'] });
          assert.equal(await store.getSetting('mcp.requireKey'), true);
          assert.deepEqual(await store.getSetting('policy'), { sourceTypes: { websites: false }, list: ['/a/b'] });
          await store.setSetting('mcp.requireKey', undefined);
          assert.equal(await store.getSetting('mcp.requireKey'), undefined);
          await assert.rejects(store.setSetting('bad key!', 1), errorCode('invalid_request'));
        }));

      test('API keys: created, found by hash, listed oldest first, revoked idempotently; duplicates refused', () =>
        withStore(async (store) => {
          const a = await store.createApiKey({ id: 'key_a', name: 'ci', plan: 'free', role: 'member', prefix: 'rdk_AAAA', hash: 'h'.repeat(64) });
          assert.deepEqual({ ...a, createdAt: '' }, { id: 'key_a', name: 'ci', plan: 'free', role: 'member', prefix: 'rdk_AAAA', createdAt: '', revokedAt: null });
          assert.match(a.createdAt, ISO_MS);
          assert.equal('hash' in a, false, 'the hash is never handed out');
          await store.createApiKey({ id: 'key_b', name: '', plan: 'pro', role: 'admin', prefix: 'rdk_BBBB', hash: 'g'.repeat(64) });
          await assert.rejects(store.createApiKey({ id: 'key_c', name: '', plan: 'pro', role: 'admin', prefix: 'rdk_CCCC', hash: 'g'.repeat(64) }), errorCode('already_exists'));
          await assert.rejects(store.createApiKey({ id: 'key_d', name: '', plan: 'pro', role: 'owner' as never, prefix: 'rdk_D', hash: 'd'.repeat(64) }), errorCode('invalid_request'));
          assert.equal((await store.findApiKeyByHash('g'.repeat(64)))?.id, 'key_b');
          assert.equal(await store.findApiKeyByHash('x'), null);
          assert.deepEqual((await store.listApiKeys()).map((k) => k.id), ['key_a', 'key_b']);
          const revoked = await store.revokeApiKey('key_a');
          assert.match(revoked?.revokedAt ?? '', ISO_MS);
          assert.equal((await store.revokeApiKey('key_a'))?.revokedAt, revoked?.revokedAt);
          assert.equal((await store.findApiKeyByHash('h'.repeat(64)))?.revokedAt, revoked?.revokedAt);
          assert.equal(await store.revokeApiKey('key_zzz'), null);
        }));

      test('renameLibrary moves versions, snippets and jobs and leaves an alias that follows later renames', () =>
        withStore(async (store) => {
          await store.upsertLibrary(lib('/old/name'));
          await buildVersion(store, '/old/name', '', [sampleSnippet({ content: 'default words' })]);
          await buildVersion(store, '/old/name', 'v1', [sampleSnippet({ content: 'pinned words' })]);
          const job = await store.createJob({ libraryId: '/old/name', version: '', kind: 'upload' });
          const renamed = await store.renameLibrary('/old/name', '/new/name');
          assert.equal(renamed.id, '/new/name');
          assert.equal(renamed.state, 'finalized');
          assert.deepEqual(renamed.versions, ['v1']);
          assert.equal(await store.getLibrary('/old/name'), null);
          assert.deepEqual(contents(await store.getSnippets('/new/name', '')), ['default words']);
          assert.deepEqual(contents(await store.getSnippets('/new/name', 'v1')), ['pinned words']);
          assert.equal((await store.getJob(job.id))?.libraryId, '/new/name');
          assert.equal(await store.resolveLibraryAlias('/old/name'), '/new/name');
          assert.equal(await store.resolveLibraryAlias('/new/name'), null);
          await store.renameLibrary('/new/name', '/third/name');
          assert.equal(await store.resolveLibraryAlias('/old/name'), '/third/name');
          assert.equal(await store.resolveLibraryAlias('/new/name'), '/third/name');
          await store.upsertLibrary(lib('/other/lib'));
          await assert.rejects(store.renameLibrary('/third/name', '/other/lib'), errorCode('already_exists'));
          await assert.rejects(store.renameLibrary('/missing/lib', '/x/y'), errorCode('library_not_found'));
          await store.deleteLibrary('/third/name');
          assert.equal(await store.resolveLibraryAlias('/old/name'), null);
        }));
    });

    test('after close, further calls fail', () =>
      withStore(async (store) => {
        await store.upsertLibrary(lib('/docs/koa'));
        await store.close();
        await assert.rejects(store.getLibrary('/docs/koa'));
        await assert.rejects(store.upsertLibrary(lib('/docs/other')));
      }));
  });
}
