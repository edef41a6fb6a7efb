/**
 * The add capabilities a source declares (issue 23 item 4): a server whose only source is a
 * custom one declaring parseAddress and specUpload serves POST /api/parse and POST
 * /api/v2/add/openapi-upload through it (its own checks, its library answers), and the web UI's
 * address form for signed-out visitors carries its labels; a server whose sources declare
 * neither answers both routes 400 source_not_enabled naming the default distribution's source.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { bearer, call, qs } from './helpers/api-server.ts';
import { serveConfig } from '../helpers/served-config.ts';
import { testConfigYaml, BASE_PLUGINS, REPO_ROOT } from '../helpers/test-kernel.ts';
import { createApiKey } from '../../server/access/api-keys.ts';

const BOARD = join(REPO_ROOT, 'test/fixtures/custom-source/board-source.ts');

test('a custom source declaring parseAddress and specUpload serves POST /api/parse, the spec-file upload and the address form', async () => {
  const s = await serveConfig(testConfigYaml([...BASE_PLUGINS, BOARD]), { prefix: 'refdesk-capabilities-' });
  try {
    const { plans, defaultPlan } = s.kernel.config.rateLimits;
    const admin = (await createApiKey(s.kernel.store, { name: 'admin', role: 'admin' }, { names: Object.keys(plans), defaultPlan })).key;
    const parse = (url: string) => call(s.base, 'POST', '/api/parse', { headers: bearer(admin), json: { url } });
    const bad = await parse('https://github.com/a/b');
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /not a board address/);
    const r = await parse('https://acme.board.test/launch');
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.libraryId, '/board/acme-launch');
    await s.refdesk.jobs.idle();
    assert.match((await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: '/board/acme-launch', query: 'move cards' }))).text, /board move --lane done/);

    const upload = (text: string, name: string) => {
      const form = new FormData();
      form.append('openapiFile', new Blob([text]), name);
      return call(s.base, 'POST', '/api/v2/add/openapi-upload', { headers: bearer(s.key), body: form });
    };
    const wrong = await upload('{"openapi": "3.0.0"}', 'api.json');
    assert.equal(wrong.status, 400);
    assert.match(wrong.body.message, /"api\.json" is not a board export/);
    const up = await upload('# board\n\n## Sprint\n\nClose the sprint with `board close --sprint 7`.\n', 'sprint.json');
    assert.equal(up.status, 200, up.text);
    assert.equal(up.body.libraryName, '/board/sprint');
    await s.refdesk.jobs.idle();
    assert.match((await call(s.base, 'GET', '/api/v2/context' + qs({ libraryId: '/board/sprint', query: 'close the sprint' }))).text, /board close --sprint 7/);

    await call(s.base, 'PATCH', '/api/settings', { headers: bearer(admin), json: { anonymous: { parse: true } } });
    const page = await call(s.base, 'GET', '/add');
    assert.equal(page.status, 200);
    assert.match(page.text, /Board address/);
  } finally {
    await s.close();
  }
});

test('without a source declaring them, POST /api/parse and the spec-file upload name the default distribution\'s source to enable', async () => {
  const s = await serveConfig(testConfigYaml([...BASE_PLUGINS, 'plugins/source-website']), { prefix: 'refdesk-capabilities-' });
  try {
    const { plans, defaultPlan } = s.kernel.config.rateLimits;
    const admin = (await createApiKey(s.kernel.store, { name: 'admin', role: 'admin' }, { names: Object.keys(plans), defaultPlan })).key;
    const p = await call(s.base, 'POST', '/api/parse', { headers: bearer(admin), json: { url: 'https://github.com/a/b' } });
    assert.equal(p.status, 400, p.text);
    assert.equal(p.body.error, 'source_not_enabled');
    assert.match(p.body.message, /The "git" source is not enabled/);
    const form = new FormData();
    form.append('openapiFile', new Blob(['{"openapi": "3.0.0"}']), 'api.json');
    const u = await call(s.base, 'POST', '/api/v2/add/openapi-upload', { headers: bearer(s.key), body: form });
    assert.equal(u.status, 400, u.text);
    assert.match(u.body.message, /The "openapi" source is not enabled/);
  } finally {
    await s.close();
  }
});
