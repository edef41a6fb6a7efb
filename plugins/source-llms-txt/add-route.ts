/** The llmstxt source's Context7-named add route (POST /api/v2/add/llmstxt {llmstxtUrl}) and its URL match for `refdesk add`. */
import { urlAddRoute } from '../../core/add-route.ts';

export const llmsTxtAddRoutes = [urlAddRoute({ path: 'llmstxt', field: 'llmstxtUrl', summary: 'Add an llms.txt file', operationId: 'addLlmsTxt' })];

/** `llms.txt`, `llms-full.txt`, `llms-ctx.txt`, `llms-ctx-full.txt`. */
export function matchLlmsTxtUrl(url: URL): number | false {
  return /\/llms(-full|-ctx|-ctx-full)?\.txt$/.test(url.pathname.toLowerCase()) ? 30 : false;
}
