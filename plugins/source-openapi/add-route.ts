/**
 * The openapi source's Context7-named add route (POST /api/v2/add/openapi {openApiUrl}) and how
 * `refdesk add <url>` recognises a specification. Uploaded files have their own route
 * (POST /api/v2/add/openapi-upload); their libraries are in the `uploaded_files` category.
 */
import { urlAddRoute } from '../../core/add-route.ts';
import type { PolicyCategory } from '../../core/define.ts';

export const openApiAddRoutes = [urlAddRoute({ path: 'openapi', field: 'openApiUrl', summary: 'Add an OpenAPI specification by URL', operationId: 'addOpenApi' })];

/** `openapi.json`, `swagger.yaml`, `.../openapi`, `.../swagger.json` and the like. */
export function matchOpenApiUrl(url: URL): number | false {
  const path = url.pathname.toLowerCase();
  return /(openapi|swagger)[^/]*\.(json|ya?ml)$/.test(path) || /\/(openapi|swagger)(\.json|\.ya?ml)?$/.test(path) ? 30 : false;
}

/** Specs by URL are `openapi`; uploaded files (a `path` spec) `uploaded_files`. */
export const openApiPolicyCategory = {
  categories: ['openapi', 'uploaded_files'] as const,
  of: (spec: Record<string, unknown>): PolicyCategory => (typeof spec.path === 'string' ? 'uploaded_files' : 'openapi'),
};
