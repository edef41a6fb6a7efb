import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { extractPage } from '../../../plugins/source-website/extract.ts';

const page = (head: string) => `<!doctype html><html><head>${head}</head><body><main><h1>Getting started</h1><p>Text.</p></main></body></html>`;

describe("a website's own name for itself", () => {
  test('og:site_name wins over <title>; the description comes from <meta name=description>', () => {
    const p = extractPage(page('<title>Getting started – Acme Docs</title><meta property="og:site_name" content="Acme"><meta name="description" content="Acme builds rockets.">'), 'https://docs.acme.dev/');
    assert.deepEqual(p.site, { name: 'Acme', description: 'Acme builds rockets.' });
    assert.equal(p.title, 'Getting started', 'the page title is still its H1');
  });

  test('without og:site_name: the site part of <title>, or the whole title; og:description as a fallback', () => {
    assert.equal(extractPage(page('<title>Quick Start — React</title>'), 'https://react.dev/').site?.name, 'React');
    assert.equal(extractPage(page('<title>Hono</title><meta property="og:description" content="Web framework.">'), 'https://hono.dev/').site?.description, 'Web framework.');
    assert.deepEqual(extractPage(page(''), 'https://x.dev/').site, {});
  });
});
