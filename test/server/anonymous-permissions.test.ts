/**
 * The four anonymous permissions as routes see them: set through PATCH /api/settings on a running
 * app, read by access.requirePermission on the next request (no restart). A tiny route per
 * permission stands in for the routes other parts build on it (parse, delete, support bundle).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { newRouter } from '../../server/routes/router.ts';
import { createApp } from '../../server/app.ts';
import { ANONYMOUS_PERMISSIONS } from '../../core/settings.ts';
import { bearer, call as callApi, createKey, startApiServer, type ApiServer } from './helpers/api-server.ts';
import { listenOnLoopback } from '../helpers/listen.ts';

let s: ApiServer;
let admin: string;
let member: string;
let server: Server;
let base: string;
/** Requests go to the app with the test routes (same kernel and store as `s`). */
const call = (_base: string, method: string, path: string, init: Parameters<typeof callApi>[3] = {}) => callApi(base, method, path, init);

describe('anonymous permissions', () => {
  before(async () => {
    s = await startApiServer({ withoutTestSources: true });
    // The app as createApp builds it, with the test routes right after its error middleware.
    const refdesk = createApp(s.kernel);
    const r = newRouter();
    for (const p of ANONYMOUS_PERMISSIONS) {
      r.post(`/test-only/${p}`, async (ctx) => {
        const caller = await refdesk.access.requirePermission(ctx, p, `Doing ${p}`);
        ctx.body = { allowed: caller.kind };
      });
    }
    refdesk.app.middleware.splice(1, 0, r.routes() as unknown as (typeof refdesk.app.middleware)[number]);
    server = createServer(refdesk.app.callback());
    base = await listenOnLoopback(server);
    admin = await createKey(s.base, { role: 'admin' });
    member = await createKey(s.base, {});
  });
  after(async () => {
    server?.closeAllConnections();
    server?.close();
    await s?.close();
  });

  test('each is Off by default: anonymous 401, member key 403, admin key allowed', async () => {
    for (const p of ANONYMOUS_PERMISSIONS) {
      assert.equal((await call(s.base, 'POST', `/test-only/${p}`)).status, 401, p);
      assert.equal((await call(s.base, 'POST', `/test-only/${p}`, { headers: bearer(member) })).status, 403, p);
      assert.equal((await call(s.base, 'POST', `/test-only/${p}`, { headers: bearer(admin) })).body.allowed, 'key', p);
    }
  });

  test('turning one On lets anyone do that one only, at once; Off again refuses', async () => {
    for (const p of ANONYMOUS_PERMISSIONS) {
      const on = await call(s.base, 'PATCH', '/api/settings', { headers: bearer(admin), json: { anonymous: { [p]: true } } });
      assert.equal(on.status, 200, on.text);
      assert.deepEqual(on.body.changed, [`anonymous.${p}`]);
      for (const q of ANONYMOUS_PERMISSIONS) {
        const r = await call(s.base, 'POST', `/test-only/${q}`);
        assert.equal(r.status, q === p ? 200 : 401, `${q} while only ${p} is On`);
      }
      assert.equal((await call(s.base, 'POST', `/test-only/${p}`, { headers: bearer(member) })).status, 200, 'a member key is anyone too');
      await call(s.base, 'PATCH', '/api/settings', { headers: bearer(admin), json: { anonymous: { [p]: false } } });
      assert.equal((await call(s.base, 'POST', `/test-only/${p}`)).status, 401, `${p} Off again`);
    }
    assert.deepEqual(await s.kernel.store.getSetting('anonymous'), { parse: false, refresh: false, delete: false, supportBundle: false });
  });
});
