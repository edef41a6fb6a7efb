/**
 * The builds-and-snippets role of the Store contract (BuildStore): staged builds, the switch to
 * a finalized build, document records, snippets and search. Builds belong to catalog libraries;
 * a version still processing is a job of the job role.
 */
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import type { BuildStore, CatalogStore, JobStore } from '../../contracts.ts';
import { ISO_MS, buildVersion, contents, errorCode, lib, sampleSnippet, storeTests, type MakeStore } from './shared.ts';

export function runBuildStoreContract(name: string, makeStore: MakeStore<CatalogStore & BuildStore & JobStore>): void {
  const storeTest = storeTests(makeStore);
  describe(`Store contract, builds and snippets: ${name}`, () => {
    storeTest('the default version and pinned versions coexist, each with its own snippets', async (store) => {
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
    });

    storeTest('pinned versions are listed newest first', async (store) => {
      await store.upsertLibrary(lib('/docs/semver'));
      for (const v of ['v1.9.0', 'v1.10.0', 'v2.0.0', 'v1.2']) await buildVersion(store, '/docs/semver', v, [sampleSnippet()]);
      assert.deepEqual((await store.getLibrary('/docs/semver'))?.versions, ['v2.0.0', 'v1.10.0', 'v1.9.0', 'v1.2']);
    });

    storeTest('a rebuild is served only once it is finalized; the old build is then dropped', async (store) => {
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
    });

    storeTest('failBuild discards the staged build; the served build is untouched', async (store) => {
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
    });

    storeTest('document records follow their build: served after finalize, dropped on fail and rebuild', async (store) => {
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
    });

    storeTest('servedBuildChunkers (optional) lists each served build once with the distinct chunkers of its documents', async (store) => {
      if (typeof store.servedBuildChunkers !== 'function') return; // optional in the contract: listVersions and getDocuments serve instead
      await store.upsertLibrary(lib('/docs/koa'));
      await store.upsertLibrary(lib('/docs/hono'));
      assert.deepEqual(await store.servedBuildChunkers(), []);
      const doc = (path: string, chunker: string) => ({ path, hash: `h-${path}`, meta: {}, chunker });
      const build = async (id: string, version: string, docs: ReturnType<typeof doc>[], finalize = true) => {
        const b = await store.beginBuild(id, version, null);
        await store.addSnippets(b, [sampleSnippet()]);
        if (docs.length > 0) await store.addDocuments(b, docs);
        if (finalize) await store.finalizeBuild(b);
        return b;
      };
      const koa = await build('/docs/koa', '', [doc('a.md', 'c2'), doc('b.md', 'c1'), doc('c.md', 'c2')]);
      const koa1 = await build('/docs/koa', 'v1', []);
      await build('/docs/hono', '', [doc('x.md', 'c1')], false); // staged only: not served
      const sorted = (await store.servedBuildChunkers()).sort((x, y) => (x.libraryId + x.version).localeCompare(y.libraryId + y.version));
      assert.deepEqual(sorted, [
        { libraryId: '/docs/koa', version: '', buildId: koa, chunkers: ['c1', 'c2'] },
        { libraryId: '/docs/koa', version: 'v1', buildId: koa1, chunkers: [] },
      ]);
      // A newer build replaces the served one.
      const koa2 = await build('/docs/koa', '', [doc('d.md', 'c3')]);
      const after = (await store.servedBuildChunkers()).find((s) => s.libraryId === '/docs/koa' && s.version === '');
      assert.deepEqual(after, { libraryId: '/docs/koa', version: '', buildId: koa2, chunkers: ['c3'] });
    });

    storeTest('a failed first build leaves the version without snippets', async (store) => {
      await store.upsertLibrary(lib('/docs/koa'));
      const b = await store.beginBuild('/docs/koa', 'v1', null);
      await store.addSnippets(b, [sampleSnippet()]);
      await store.failBuild(b);
      await assert.rejects(store.getSnippets('/docs/koa', 'v1'), errorCode('version_not_found'));
      assert.deepEqual((await store.getLibrary('/docs/koa'))?.versions, []);
    });

    storeTest('beginBuild requires the library; unknown build ids are refused', async (store) => {
      await assert.rejects(store.beginBuild('/docs/missing', '', null), errorCode('library_not_found'));
      await assert.rejects(store.addSnippets('no-such-build', [sampleSnippet()]), errorCode('invalid_request'));
      await assert.rejects(store.finalizeBuild('no-such-build'), errorCode('invalid_request'));
      await assert.rejects(store.failBuild('no-such-build'), errorCode('invalid_request'));
    });

    storeTest('getSnippets returns document order and round-trips every field', async (store) => {
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
    });

    storeTest('getSnippetHeads (optional) gives each snippet of the served build cut to id, seq, file, heading path and title, in order', async (store) => {
      if (typeof store.getSnippetHeads !== 'function') return; // optional in the contract: getSnippets serves instead
      await store.upsertLibrary(lib('/docs/koa'));
      await buildVersion(store, '/docs/koa', '', [sampleSnippet({ content: 'old' })]);
      const b = await store.beginBuild('/docs/koa', '', null);
      await store.addSnippets(b, [
        sampleSnippet({ title: 'Create an app', content: 'long prose '.repeat(50), breadcrumb: ['Koa', 'Getting started'], sourcePath: 'docs/index.md' }),
        sampleSnippet({ type: 'code', title: 'Listen', code: 'app.listen(3000)', language: 'js', content: '', breadcrumb: [], sourcePath: 'docs/api/app.md' }),
      ]);
      await store.addSnippets(b, [sampleSnippet({ title: 'Context', breadcrumb: ['Koa', 'Context'], sourcePath: 'docs/api/context.md' })]);
      // Not served until finalized: the heads are the served build's.
      assert.equal((await store.getSnippetHeads('/docs/koa', '')).length, 1);
      await store.finalizeBuild(b);
      const heads = await store.getSnippetHeads('/docs/koa', '');
      const cut = (await store.getSnippets('/docs/koa', '')).map(({ id, seq, sourcePath, breadcrumb, title }) => ({ id, seq, sourcePath, breadcrumb, title }));
      assert.deepEqual(
        heads.map((h) => ({ ...h, breadcrumb: [...h.breadcrumb] })),
        cut.map((h) => ({ ...h, breadcrumb: [...h.breadcrumb] })),
      );
      assert.deepEqual(heads.map((h) => h.title), ['Create an app', 'Listen', 'Context']);
      for (const h of heads) assert.deepEqual(Object.keys(h).sort(), ['breadcrumb', 'id', 'seq', 'sourcePath', 'title'], 'no text');

      await assert.rejects(store.getSnippetHeads('/docs/missing', ''), errorCode('library_not_found'));
      await assert.rejects(store.getSnippetHeads('/docs/koa', 'v3'), errorCode('version_not_found'));
    });

    storeTest('search finds a snippet by a distinctive word, best first, at most limit hits', async (store) => {
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
    });

    storeTest('search reads the requested version only', async (store) => {
      await store.upsertLibrary(lib('/docs/koa'));
      await buildVersion(store, '/docs/koa', 'v1', [sampleSnippet({ content: 'legacy generator middleware' })]);
      await buildVersion(store, '/docs/koa', 'v2', [sampleSnippet({ content: 'async function middleware' })]);
      const v1 = await store.search('/docs/koa', 'v1', 'generator', 10);
      assert.equal(v1.length, 1);
      assert.deepEqual(await store.search('/docs/koa', 'v2', 'generator', 10), []);
    });

    storeTest('not-found errors: unknown library, unbuilt pinned version, default version still processing', async (store) => {
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
    });
  });
}
