import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RefdeskError } from '../../core/errors.ts';
import { deriveGitLibraryId, normalizeGitSpec, parseGitRepoUrl } from '../../core/git-url.ts';
import { parseLibraryId } from '../../core/library-id.ts';

interface Row {
  url: string;
  provider?: string;
  id: string;
  repoUrl?: string;
  branch?: string;
  folder?: string;
}

const ROWS: Row[] = [
  // GitHub: /owner/repo, whatever follows
  { url: 'https://github.com/vercel/next.js', id: '/vercel/next.js', repoUrl: 'https://github.com/vercel/next.js' },
  { url: 'https://github.com/vercel/next.js/', id: '/vercel/next.js', repoUrl: 'https://github.com/vercel/next.js' },
  { url: 'https://github.com/vercel/next.js.git', id: '/vercel/next.js', repoUrl: 'https://github.com/vercel/next.js.git' },
  { url: 'https://github.com/vercel/next.js.git/', id: '/vercel/next.js' },
  { url: 'https://www.github.com/a/b', id: '/a/b' },
  { url: 'http://github.com/a/b', id: '/a/b' },
  { url: 'git@github.com:fastapi/fastapi.git', id: '/fastapi/fastapi', repoUrl: 'git@github.com:fastapi/fastapi.git' },
  { url: 'ssh://git@github.com/fastapi/fastapi.git', id: '/fastapi/fastapi' },
  { url: 'https://github.com/a/b/tree/main/docs', id: '/a/b', repoUrl: 'https://github.com/a/b', branch: 'main', folder: 'docs' },
  { url: 'https://github.com/a/b/tree/main/docs/', id: '/a/b', repoUrl: 'https://github.com/a/b', branch: 'main', folder: 'docs' },
  { url: 'https://github.com/a/b/tree/v2.1.0/packages/core/docs', id: '/a/b', branch: 'v2.1.0', folder: 'packages/core/docs' },
  { url: 'https://github.com/a/b/tree/dev', id: '/a/b', repoUrl: 'https://github.com/a/b', branch: 'dev' },
  { url: 'https://github.com/a/b/blob/main/docs/intro.md', id: '/a/b', branch: 'main', folder: 'docs' },
  { url: 'https://github.com/a/b/blob/main/README.md', id: '/a/b', branch: 'main' },
  { url: 'https://github.com/a/b.git/tree/main/docs', id: '/a/b', repoUrl: 'https://github.com/a/b.git', branch: 'main', folder: 'docs' },
  // Bitbucket: /owner/repo; src/<ref>/<folder>
  { url: 'https://bitbucket.org/team/repo', id: '/team/repo' },
  { url: 'https://bitbucket.org/team/repo.git', id: '/team/repo' },
  { url: 'git@bitbucket.org:team/repo.git', id: '/team/repo' },
  { url: 'https://bitbucket.org/team/repo/src/main/docs', id: '/team/repo', repoUrl: 'https://bitbucket.org/team/repo', branch: 'main', folder: 'docs' },
  { url: 'https://bitbucket.org/team/repo/src/main/', id: '/team/repo', branch: 'main' },
  // GitLab: the full namespace path; /-/tree and /-/blob
  { url: 'https://gitlab.com/group/project', id: '/group/project' },
  { url: 'https://gitlab.com/group/sub/project', id: '/group/sub/project', repoUrl: 'https://gitlab.com/group/sub/project' },
  { url: 'https://gitlab.com/group/sub/project.git', id: '/group/sub/project' },
  { url: 'https://gitlab.com/group/sub/deeper/project/', id: '/group/sub/deeper/project' },
  { url: 'ssh://git@gitlab.com/group/sub/project.git', id: '/group/sub/project' },
  { url: 'git@gitlab.com:group/sub/project.git', id: '/group/sub/project', repoUrl: 'git@gitlab.com:group/sub/project.git' },
  { url: 'https://gitlab.com/group/sub/project/-/tree/main/docs', id: '/group/sub/project', repoUrl: 'https://gitlab.com/group/sub/project', branch: 'main', folder: 'docs' },
  { url: 'https://gitlab.com/group/sub/project/-/tree/main', id: '/group/sub/project', branch: 'main' },
  { url: 'https://gitlab.com/group/sub/project/-/blob/v1.0/doc/api/index.md', id: '/group/sub/project', branch: 'v1.0', folder: 'doc/api' },
  { url: 'https://gitlab.example.org/infra/tools/cli', id: '/infra/tools/cli' },
  { url: 'https://code.example.org/infra/tools/cli', provider: 'gitlab', id: '/infra/tools/cli' },
  { url: 'https://code.example.org/infra/tools/cli/-/tree/main/docs', provider: 'gitlab', id: '/infra/tools/cli', branch: 'main', folder: 'docs' },
  // other git servers: the whole repository path; file:// the last two segments
  { url: 'https://git.example.org/tools/widgets.git', id: '/tools/widgets' },
  { url: 'https://git.example.org/scm/team/widgets.git', id: '/scm/team/widgets' },
  { url: 'file:///srv/git/acme/widgets.git', id: '/acme/widgets', repoUrl: 'file:///srv/git/acme/widgets.git' },
  { url: 'file:///srv/git/acme/widgets/', id: '/acme/widgets' },
];

describe('git URLs to library IDs (core/git-url.ts)', () => {
  test(`${ROWS.length} URL forms give the ID, repository URL, branch and folder`, () => {
    for (const row of ROWS) {
      const ref = parseGitRepoUrl(row.url, row.provider);
      assert.equal(ref.id, row.id, row.url);
      if (row.repoUrl !== undefined) assert.equal(ref.repoUrl, row.repoUrl, row.url);
      assert.equal(ref.branch, row.branch, row.url);
      assert.equal(ref.folder, row.folder, row.url);
      assert.equal(deriveGitLibraryId({ url: row.url, ...(row.provider ? { provider: row.provider } : {}) }), row.id, row.url);
      // every derived ID is a valid library ID naming the whole path
      assert.equal(parseLibraryId(row.id, { wholePath: true }).id, row.id, row.url);
      // the repository URL is itself a repository URL giving the same ID, with nothing left to cut
      const again = parseGitRepoUrl(ref.repoUrl, row.provider);
      assert.equal(again.id, row.id, row.url);
      assert.equal(again.branch, undefined, row.url);
    }
  });

  test('URLs that are not a repository are refused with what to give instead', () => {
    const BAD: Array<[string, RegExp]> = [
      ['https://github.com/a/b/issues/12', /names a page of the repository .*not the repository: give https:\/\/github\.com\/owner\/repo/],
      ['https://github.com/a/b/pulls', /not the repository/],
      ['https://gitlab.com/g/p/-/issues', /not the repository: give https:\/\/gitlab\.com\/group\/project/],
      ['https://bitbucket.org/t/r/pull-requests', /not the repository/],
      ['https://github.com/a/b/tree', /"tree" without a branch/],
      ['https://github.com/a/b/tree/-evil/docs', /not a valid branch name/],
      ['https://github.com/solo', /no owner\/repo path/],
      ['https://example.com/solo', /give the library ID/],
      ['https://git.example.org/a/b c', /Invalid git URL/],
      ['ftp://github.com/a/b', /the scheme "ftp" is not supported/],
      ['https://git.example.org/a/b%ZZ', /Invalid git URL/],
    ];
    for (const [url, re] of BAD) {
      assert.throws(() => parseGitRepoUrl(url), (e: unknown) => e instanceof RefdeskError && e.code === 'invalid_request' && re.test(e.message), url);
    }
  });

  test('normalizeGitSpec moves the branch and folder out of the URL, and refuses a conflicting branch', () => {
    assert.deepEqual(normalizeGitSpec({ url: 'https://github.com/a/b/tree/main/docs', token: 't' }), { url: 'https://github.com/a/b', branch: 'main', folder: 'docs', token: 't' });
    assert.deepEqual(normalizeGitSpec({ url: 'https://github.com/a/b/', branch: 'dev' }), { url: 'https://github.com/a/b', branch: 'dev' });
    assert.deepEqual(normalizeGitSpec({ url: 'https://github.com/a/b/tree/main', branch: 'main' }), { url: 'https://github.com/a/b', branch: 'main' });
    assert.throws(
      () => normalizeGitSpec({ url: 'https://github.com/a/b/tree/main/docs', branch: 'dev' }),
      (e: unknown) => e instanceof RefdeskError && e.code === 'invalid_request' && /names the branch "main" but the branch "dev"/.test(e.message),
    );
  });
});
