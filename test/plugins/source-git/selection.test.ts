import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { runSource } from '../../../core/testing/index.ts';
import { RefdeskError } from '../../../core/errors.ts';
import { deriveGitLibraryId, parseGitUrl, webUrlFor } from '../../../plugins/source-git/git-url.ts';
import { NO_CONFIG, parseRepoConfig } from '../../../plugins/source-git/repo-config.ts';
import { selectDocs } from '../../../plugins/source-git/select.ts';
import { gitFixture, rejectsWith, type GitFixture } from './helpers.ts';

const TREE = [
  'CHANGELOG.md',
  'CODE_OF_CONDUCT.md',
  'LICENSE.md',
  'README.md',
  'docs/en/index.md',
  'docs/es/index.md',
  'docs/fr/index.md',
  'docs/guide/install.mdx',
  'docs/notes.txt',
  'docs/tour.ipynb',
  'examples/basic/README.md',
  'node_modules/lib/README.md',
  'packages/core/CHANGELOG.md',
  'packages/core/README.md',
  'requirements.txt',
  'src/app.ts',
  'tests/fixtures/page.md',
  'vendor/x/docs/index.md',
  '.github/ISSUE_TEMPLATE/bug.md',
  'notebooks/scratch.ipynb',
];

describe('default selection', () => {
  test('docs, READMEs and the root changelog; not tests, vendored code, translations, boilerplate or sub-package changelogs', () => {
    const { files, skipped } = selectDocs(TREE, NO_CONFIG);
    assert.deepEqual(files.map((f) => f.path), [
      'CHANGELOG.md',
      'README.md',
      'docs/en/index.md',
      'docs/guide/install.mdx',
      'docs/notes.txt',
      'docs/tour.ipynb',
      'examples/basic/README.md',
      'packages/core/README.md',
    ]);
    assert.equal(files.find((f) => f.path === 'docs/guide/install.mdx')?.format, 'mdx');
    assert.equal(files.find((f) => f.path === 'docs/tour.ipynb')?.format, 'notebook');
    assert.equal(skipped.translations, 2);
    assert.equal(skipped['changelogs of sub-packages'], 1);
  });
});

describe('refdesk.json / context7.json', () => {
  test('folders, excludeFolders (paths, names, globs) and excludeFiles choose the files', () => {
    const config = parseRepoConfig('context7.json', JSON.stringify({ folders: ['docs', './examples/'], excludeFolders: ['docs/guide'], excludeFiles: ['*.txt'], rules: ['Always await run()'], previousVersions: [{ tag: 'v1.0.0', title: 'one' }] }));
    assert.deepEqual(config.rules, ['Always await run()']);
    assert.deepEqual(config.previousVersions, ['v1.0.0']);
    const { files } = selectDocs(TREE, config);
    assert.deepEqual(files.map((f) => f.path), ['docs/en/index.md', 'docs/tour.ipynb', 'examples/basic/README.md']);
    const byName = selectDocs(TREE, parseRepoConfig('refdesk.json', '{"excludeFolders": ["basic"], "excludeFiles": ["CHANGELOG.md"]}'));
    assert.ok(!byName.files.some((f) => f.path.startsWith('examples/basic/')));
    assert.ok(!byName.files.some((f) => f.path === 'CHANGELOG.md'));
  });

  test('bad config files are clear errors naming the file and field', () => {
    assert.throws(() => parseRepoConfig('refdesk.json', '{folders:'), (e: RefdeskError) => e.code === 'invalid_source' && /refdesk\.json .*not valid JSON/.test(e.message));
    assert.throws(() => parseRepoConfig('context7.json', '{"folders": "docs"}'), (e: RefdeskError) => /"folders" must be an array/.test(e.message));
    assert.throws(() => parseRepoConfig('refdesk.json', '{"folders": ["../outside"]}'), (e: RefdeskError) => /leaves the repository/.test(e.message));
  });
});

describe('URLs and library IDs', () => {
  test('deriveId gives /owner/repo for every URL form (GitLab subgroups: the full project path)', () => {
    const id = (url: string) => deriveGitLibraryId({ url });
    assert.equal(id('https://github.com/vercel/next.js'), '/vercel/next.js');
    assert.equal(id('https://github.com/vercel/next.js.git/'), '/vercel/next.js');
    assert.equal(id('git@github.com:fastapi/fastapi.git'), '/fastapi/fastapi');
    assert.equal(id('ssh://git@gitlab.com/group/sub/project.git'), '/group/sub/project');
    assert.equal(id('https://github.com/a/b/tree/main/docs'), '/a/b');
    assert.equal(id('https://bitbucket.org/team/repo'), '/team/repo');
    assert.equal(id('file:///srv/git/acme/widgets.git'), '/acme/widgets');
    assert.throws(() => id('https://example.com/solo'), (e: RefdeskError) => e.code === 'invalid_request' && /give the library ID/.test(e.message));
  });

  test('providers are detected from the host; bad URLs are refused with what to use instead', () => {
    assert.equal(parseGitUrl('https://github.com/a/b').provider, 'github');
    assert.equal(parseGitUrl('https://gitlab.example.org/a/b').provider, 'gitlab');
    assert.equal(parseGitUrl('https://code.example.org/a/b').provider, 'git');
    assert.equal(parseGitUrl('https://code.example.org/a/b', 'gitlab').provider, 'gitlab');
    assert.equal(parseGitUrl('git@bitbucket.org:a/b.git').provider, 'bitbucket');
    for (const bad of ['', 'ftp://x/a/b', '--upload-pack=evil', 'https://x/a/../b', 'https://x/a b', 'ext::sh -c evil']) {
      assert.throws(() => parseGitUrl(bad), (e: RefdeskError) => e.code === 'invalid_request' && /Invalid git URL/.test(e.message), bad);
    }
    const err = (() => {
      try {
        parseGitUrl('https://me:s3cr3t-pass@github.com/a/b');
      } catch (e) {
        return e as RefdeskError;
      }
    })()!;
    assert.equal(err.code, 'invalid_request');
    assert.ok(!err.message.includes('s3cr3t-pass'));
  });

  test('web URLs of documents follow the provider layout', () => {
    assert.equal(webUrlFor(parseGitUrl('https://github.com/a/b.git'), 'main', 'docs/x y.md'), 'https://github.com/a/b/blob/main/docs/x%20y.md');
    assert.equal(webUrlFor(parseGitUrl('git@gitlab.com:g/s/p.git'), 'v1.0', 'README.md'), 'https://gitlab.com/g/s/p/-/blob/v1.0/README.md');
    assert.equal(webUrlFor(parseGitUrl('https://bitbucket.org/t/r'), 'dev', 'a.md'), 'https://bitbucket.org/t/r/src/dev/a.md');
    assert.equal(webUrlFor(parseGitUrl('https://git.example.com/t/r'), 'dev', 'a.md'), undefined);
  });
});

describe('config files in a served repository', () => {
  let fx: GitFixture;
  before(async () => {
    fx = await gitFixture();
    fx.repo('configured')
      .commit({
        'README.md': '# Top readme\n',
        'guides/intro.md': '# Intro\n\nHello.\n',
        'guides/legacy/old.md': '# Old\n',
        'docs/ignored.md': '# Not chosen\n',
        'context7.json': JSON.stringify({ folders: ['docs'] }),
        'refdesk.json': JSON.stringify({ folders: ['guides'], excludeFolders: ['guides/legacy'], previousVersions: [{ tag: 'v0.9.0' }, { tag: 'v0.1.0' }] }),
      })
      .tag('v0.9.0')
      .publish();
    fx.repo('badconfig').commit({ 'README.md': '# R\n', 'context7.json': '{ nope' }).publish();
  });
  after(() => fx?.close());

  test('refdesk.json wins over context7.json and chooses the folders; previousVersions are reported as versions', async () => {
    const { documents, logs } = await runSource(fx.source(), { url: fx.url('configured') });
    assert.deepEqual(documents.map((d) => d.path), ['guides/intro.md']);
    assert.ok(logs.some((l) => l.message.startsWith('using refdesk.json')));
    const v = await fx.source().versions({ url: fx.url('configured') });
    assert.deepEqual(v.configured, ['v0.9.0'], 'only tags that exist');
  });

  test('an invalid config file fails the read with a message naming it', async () => {
    await rejectsWith(runSource(fx.source(), { url: fx.url('badconfig') }), 'invalid_source', ['context7.json', 'not valid JSON']);
  });
});
