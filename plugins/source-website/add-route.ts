/**
 * The website source's Context7-named add route (POST /api/v2/add/website {websiteUrl}) and its
 * URL match for `refdesk add`: any http(s) page, at the lowest score, so the website is the
 * generic fallback among the loaded sources.
 */
import { urlAddRoute } from '../../core/add-route.ts';

export const websiteAddRoutes = [
  urlAddRoute({
    path: 'website',
    field: 'websiteUrl',
    summary: 'Add a website',
    operationId: 'addWebsite',
    extra: { websiteBaseUrl: { type: 'string', format: 'uri', description: 'Accepted for Context7 compatibility; not used.' } },
  }),
];

export const matchWebsiteUrl = (url: URL): number | false => (url.protocol === 'http:' || url.protocol === 'https:' ? 1 : false);
