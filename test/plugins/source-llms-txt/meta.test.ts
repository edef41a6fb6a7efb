import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createFetch } from '../../../core/services.ts';
import { runSource } from '../../../core/testing/index.ts';
import { LlmsTxtSource } from '../../../plugins/source-llms-txt/llms-txt-source.ts';
import { hasCorpora } from '../../helpers/corpora.ts';
import { send, startServer } from '../../helpers/route-server.ts';
import { fixture } from './fixture-site.ts';

const source = () => new LlmsTxtSource({ retryBaseDelayMs: 5, retryAttempts: 3 }, { fetch: createFetch(5_000) });

describe("llms.txt names the library: its H1 and its blockquote summary", () => {
  test('an index file', async (t) => {
    const site = await startServer((_req, res, url) => {
      if (url.pathname === '/llms.txt') return send(res, 200, '# Rocket Kit\n\n> Rocket Kit launches *small* rockets\n> from a browser.\n\n## Docs\n\n- [Start](/start.md): first steps\n');
      if (url.pathname === '/start.md') return send(res, 200, '# Start\n\nLaunch with `kit.launch()`.\n', 'text/markdown');
      send(res, 404, 'no');
    }, t);
    const { meta } = await runSource(source(), { url: `${site.base}/llms.txt` });
    assert.equal(meta.title, 'Rocket Kit');
    assert.equal(meta.description, 'Rocket Kit launches small rockets from a browser.');
    assert.equal(meta.official, true);
  });

  test('a context file (llms-ctx-full.txt)', { skip: hasCorpora ? false : 'shared corpora not present' }, async (t) => {
    const site = await startServer((_req, res, url) => {
      if (url.pathname === '/docs/llms-ctx-full.txt') return send(res, 200, fixture('fasthtml/llms-ctx-full.txt'));
      send(res, 404, 'no');
    }, t);
    const { meta } = await runSource(source(), { url: `${site.base}/docs/llms-ctx-full.txt` });
    assert.equal(meta.title, 'FastHTML');
    assert.match(meta.description ?? '', /^FastHTML is a python library/);
  });
});
