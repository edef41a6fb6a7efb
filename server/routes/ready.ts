import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { LicenceView } from '../access.ts';
import { InstalledLicence } from '../licence.ts';

/**
 * GET /api/ready: whether this node should receive traffic. An expired licence keeps the node
 * ready (200, `license: "expired"`): it still serves search, context and MCP, so a load balancer
 * must not drop it. Minimal on purpose: the store, job runner and disk checks belong beside it.
 */
export function readyRoutes(licence: LicenceView | undefined): Router {
  const r = newRouter();
  r.get('/api/ready', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const license = licence instanceof InstalledLicence ? licence.state() : licence ? (licence.expired() ? 'expired' : 'valid') : 'none';
    ctx.body = { status: 'ready', license };
  });
  return r;
}
