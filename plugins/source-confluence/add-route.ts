/**
 * The confluence source's Context7-named add route (POST /api/v2/add/confluence) and its URL
 * match for `refdesk add`. Context7's fields Refdesk does not use (cloudId, pageIds, projectId)
 * are accepted and ignored; `title` (or `spaceName`) and `description` describe the library.
 */
import type { AddRouteDeclaration } from '../../core/define.ts';
import { RefdeskError } from '../../core/errors.ts';

export const confluenceAddRoutes: readonly AddRouteDeclaration[] = [
  {
    path: 'confluence',
    summary: 'Add a Confluence space',
    operationId: 'addConfluence',
    body: {
      type: 'object',
      required: ['siteUrl', 'spaceKey'],
      properties: {
        siteUrl: { type: 'string', format: 'uri' },
        spaceKey: { type: 'string' },
        rootPageId: { type: 'string' },
        deployment: { type: 'string', enum: ['cloud', 'server'] },
        email: { type: 'string' },
        apiToken: { type: 'string', writeOnly: true },
        personalAccessToken: { type: 'string', writeOnly: true },
        cloudId: { type: 'string' },
        spaceName: { type: 'string' },
        pageIds: { type: 'array', items: { type: 'string' } },
        title: { type: 'string' },
        description: { type: 'string' },
        projectId: { type: 'string' },
      },
    },
    toSpec(body) {
      const siteUrl = body.httpUrl('siteUrl');
      const spaceKey = body.required('spaceKey', 255);
      if (!/^[A-Za-z0-9~_-]+$/.test(spaceKey)) throw new RefdeskError('invalid_request', 'Parameter "spaceKey" may contain only letters, digits, "~", "_" and "-".');
      const spec: Record<string, unknown> = { siteUrl, spaceKey };
      for (const k of ['rootPageId', 'email', 'apiToken', 'personalAccessToken'] as const) {
        const v = body.optional(k, 1000);
        if (v !== undefined) spec[k] = v;
      }
      const deployment = body.optional('deployment', 10);
      if (deployment !== undefined) {
        if (deployment !== 'cloud' && deployment !== 'server') throw new RefdeskError('invalid_request', 'Parameter "deployment" must be "cloud" or "server".');
        spec.deployment = deployment;
      }
      return { spec, title: body.optional('title', 200) ?? body.optional('spaceName', 200), description: body.optional('description', 2000) };
    },
  },
];

/** An Atlassian Cloud site or a `/wiki/spaces/` address. */
export function matchConfluenceUrl(url: URL): number | false {
  return /\/wiki\/spaces\//.test(url.pathname.toLowerCase()) || /\.atlassian\.net$/i.test(url.hostname) ? 20 : false;
}
