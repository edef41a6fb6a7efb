import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createFetch } from '../../../core/services.ts';
import { runSource } from '../../../core/testing/index.ts';
import { NpmSource } from '../../../plugins/source-package/npm-source.ts';
import { PypiSource } from '../../../plugins/source-package/pypi-source.ts';
import { startNpmRegistry, startPypiIndex } from './registry.ts';

const FAST = { retryBaseDelayMs: 2, retryAttempts: 3 };

describe('package sources report the package as the registry names it', () => {
  test("npm: package.json name, description and homepage; the package is the owner's own", async (t) => {
    const reg = await startNpmRegistry(t, {
      '@acme/charts': {
        versions: {
          '1.2.0': {
            files: {
              'package.json': JSON.stringify({ name: '@acme/charts', description: 'Charts for dashboards.', homepage: 'https://charts.example' }),
              'README.md': '# Acme Charts\n\nDraw charts.\n',
            },
          },
        },
      },
    });
    const { meta } = await runSource(new NpmSource(FAST, { fetch: createFetch(5_000) }), { name: '@acme/charts', registry: reg.base });
    assert.equal(meta.title, '@acme/charts');
    assert.equal(meta.description, 'Charts for dashboards.');
    assert.equal(meta.homepage, 'https://charts.example');
    assert.equal(meta.official, true);
  });

  test('PyPI: info.name as the project spells it and info.summary', async (t) => {
    const index = await startPypiIndex(t, {
      'data-pipes': { '0.9': { displayName: 'Data-Pipes', summary: 'Pipelines for tabular data.', description: '# Data-Pipes\n\nLong text.\n', contentType: 'text/markdown' } },
    });
    const { meta } = await runSource(new PypiSource(FAST, { fetch: createFetch(5_000) }), { name: 'data-pipes', index: index.base });
    assert.equal(meta.title, 'Data-Pipes');
    assert.equal(meta.description, 'Pipelines for tabular data.');
    assert.equal(meta.official, true);
  });
});
