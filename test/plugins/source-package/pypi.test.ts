import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createFetch } from '../../../core/services.ts';
import { runSource, runSourceContract } from '../../../core/testing/index.ts';
import { PypiSource, pypiVersions } from '../../../plugins/source-package/pypi-source.ts';
import { derivePypiId } from '../../../plugins/source-package/names.ts';
import { resolvePackageSource } from '../../../plugins/source-package/resolve-package.ts';
import { rstToMarkdown } from '../../../plugins/source-package/rst.ts';
import { startNpmRegistry, startPypiIndex } from './registry.ts';
import { rejection } from '../../helpers/rejects-with.ts';

const FAST = { retryBaseDelayMs: 2, retryAttempts: 3 };

function source(): PypiSource {
  return new PypiSource(FAST, { fetch: createFetch(5_000) });
}


const RST = `Fetcher
=======

Fetch things with \`\`fetcher.get()\`\`.

Install
-------

Run::

    pip install fetcher
`;

async function index(t: Parameters<typeof startPypiIndex>[0]) {
  return startPypiIndex(t, {
    fetcher: {
      '1.0': {
        description: RST,
        contentType: 'text/x-rst',
        sdist: { 'README.rst': RST, 'docs/index.rst': 'Guide\n=====\n\nUse it.\n', 'docs/api.md': '# API\n\n`get(url)` fetches.\n', 'CHANGES.md': '# 1.0\n', 'fetcher/__init__.py': 'def get(url): ...\n' },
      },
      '2.0': {
        description: '# Fetcher 2\n\nNow async.\n',
        contentType: 'text/markdown',
        wheel: { 'fetcher/__init__.py': 'async def get(url): ...\n', 'fetcher-2.0.dist-info/METADATA': 'Name: fetcher\n', 'docs/usage.md': '# Usage\n\nawait get(url)\n' },
      },
    },
    broken: { '0.1': { description: 'x', sdist: { 'README.md': '# x\n' }, badDigest: true } },
  });
}

describe('PyPI source', () => {
  test('latest release: markdown long description and the wheel docs', async (t) => {
    const idx = await index(t);
    const { documents, logs } = await runSource(source(), { name: 'Fetcher', index: idx.base });
    assert.deepEqual(documents.map((d) => [d.path, d.format]), [['README.md', 'markdown'], ['docs/usage.md', 'markdown']]);
    assert.equal(documents[0].content, '# Fetcher 2\n\nNow async.\n');
    assert.equal(documents[0].url, `${idx.base}/project/fetcher/2.0/`);
    assert.ok(documents.every((d) => d.meta?.version === '2.0' && /^[0-9a-f]{64}$/.test(d.meta?.sha256 ?? '')));
    assert.ok(logs.some((l) => /PyPI fetcher 2\.0: wheel fetcher-2\.0-py3-none-any\.whl/.test(l.message)));
    assert.equal(idx.server.requests[0].path, '/pypi/fetcher/json');
  });

  test('a pinned release with an sdist: rst description converted line for line, docs folder read', async (t) => {
    const idx = await index(t);
    const { documents } = await runSource(source(), { name: 'fetcher', index: idx.base }, { version: '1.0' });
    assert.deepEqual(documents.map((d) => d.path), ['README.rst', 'docs/api.md', 'docs/index.rst']);
    assert.equal(idx.server.requests[0].path, '/pypi/fetcher/1.0/json');
    const readme = documents[0];
    assert.equal(readme.format, 'markdown');
    assert.equal(readme.content.split('\n').length, RST.split('\n').length);
    // Underlines become blank lines so that line N stays line N of the original.
    assert.match(readme.content, /^# Fetcher\n\n\nFetch things with `fetcher\.get\(\)`\.\n\n## Install\n\n\nRun:\n```\npip install fetcher\n```$/);
    assert.equal(documents[2].content, "# Guide\n\n\nUse it.\n");
  });

  test('unknown project, unknown release, bad name: clear errors', async (t) => {
    const idx = await index(t);
    let e = await rejection(runSource(source(), { name: 'nothing', index: idx.base }));
    assert.equal(e.code, 'library_not_found');
    assert.equal(e.message, `The PyPI project "nothing" was not found on ${idx.base}. Check the name or the index URL.`);
    e = await rejection(runSource(source(), { name: 'fetcher', index: idx.base }, { version: '7.0' }));
    assert.equal(e.code, 'version_not_found');
    assert.equal(e.message, 'The PyPI project "fetcher" has no release "7.0" (latest: 2.0; recent: 2.0, 1.0).');
    e = await rejection(runSource(source(), { name: 'bad/name', index: idx.base }));
    assert.match(e.message, /is not a valid PyPI project name/);
  });

  test('an archive that does not match its sha256 is refused; 503s are retried', async (t) => {
    const idx = await index(t);
    const e = await rejection(runSource(source(), { name: 'broken', index: idx.base }));
    assert.match(e.message, /^The sdist of broken 0\.1 downloaded from .* does not match the sha256 digest/);
    idx.fail('/pypi/fetcher/json', 503, 2);
    const { documents, logs } = await runSource(source(), { name: 'fetcher', index: idx.base });
    assert.equal(documents.length, 2);
    assert.equal(logs.filter((l) => l.message.startsWith('retrying')).length, 2);
  });

  test('refresh of the same release reuses its documents without downloading', async (t) => {
    const idx = await index(t);
    const first = await runSource(source(), { name: 'fetcher', index: idx.base });
    idx.server.requests.length = 0;
    const previous = new Map(first.documents.map((d) => [d.path, { hash: d.hash!, meta: d.meta! }]));
    const second = await runSource(source(), { name: 'fetcher', index: idx.base }, { previous });
    assert.deepEqual(second.documents.map((d) => [d.path, d.unchanged]), [['README.md', true], ['docs/usage.md', true]]);
    assert.deepEqual(idx.server.requests.map((r) => r.path), ['/pypi/fetcher/json']);
  });

  test('ids and version order', () => {
    assert.equal(derivePypiId({ name: 'Zope.Interface' }), '/pypi/zope-interface');
    assert.deepEqual(pypiVersions({ releases: { '1.0': [], '10.1': [], '2.0rc1': [], '2.0': [], '2.0.post1': [] } }), ['10.1', '2.0.post1', '2.0', '2.0rc1', '1.0']);
  });

  test('rst: code-block directive, admonitions and other directives, line count kept', () => {
    const src = '.. code-block:: python\n   :linenos:\n\n   import x\n   x.go()\n\n.. note:: Careful.\n\n.. toctree::\n   :maxdepth: 2\n\n   api\n';
    const out = rstToMarkdown(src);
    assert.equal(out.split('\n').length, src.split('\n').length);
    assert.match(out, /^```python\n\n\nimport x\nx\.go\(\)\n```\n\*\*Note:\*\* Careful\./);
    assert.ok(!out.includes('toctree') && !out.includes('maxdepth'));
  });
});

describe('/packages/<name> resolution', () => {
  test('npm first when both registries have the name; PyPI when only it does; neither is a 404', async (t) => {
    const npm = await startNpmRegistry(t, { shared: { versions: { '1.0.0': { files: { 'README.md': '# s\n' } } } } });
    const pypi = await startPypiIndex(t, { shared: { '1.0': { description: 'x' } }, 'only-py': { '1.0': { description: 'y' } } });
    const opts = { npmRegistry: npm.base, pypiIndex: pypi.base, retry: { baseDelayMs: 1 } };
    const f = createFetch(5_000);
    assert.deepEqual(await resolvePackageSource('shared', f, opts), { kind: 'npm', spec: { name: 'shared' } });
    assert.equal(pypi.server.requests.length, 0);
    assert.deepEqual(await resolvePackageSource('Only_Py', f, opts), { kind: 'pypi', spec: { name: 'only-py' } });
    const e = await rejection(resolvePackageSource('ghost', f, opts));
    assert.equal(e.code, 'library_not_found');
    assert.equal(e.message, `No npm package and no PyPI project is named "ghost" (looked in ${npm.base} and ${pypi.base}).`);
    // A registry outage is an error, not a reason to pick the other registry.
    npm.fail('/shared', 503, 99);
    const outage = await rejection(resolvePackageSource('shared', f, { ...opts, retry: { attempts: 2, baseDelayMs: 1 } }));
    assert.equal(outage.code, 'invalid_source');
    assert.match(outage.message, /answered HTTP 503 Service Unavailable after 2 attempts/);
  });
});

runSourceContract('pypi', async () => {
  const idx = await index(undefined);
  return { source: source(), spec: { name: 'fetcher', index: idx.base }, cleanup: () => idx.server.close() };
});
