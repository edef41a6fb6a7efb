/**
 * Helpers for the add routes a source declares (SourceDefinition.addRoutes, core/define.ts).
 */
import type { AddRouteDeclaration, JsonSchema } from './define.ts';

/**
 * A route whose body names one http(s) URL (`field`) that becomes the spec's `url`, e.g.
 * `POST /api/v2/add/llmstxt {"llmstxtUrl": ...}`. `extra`: more fields it accepts (and ignores).
 */
export function urlAddRoute(route: { path: string; field: string; summary: string; operationId: string; extra?: Record<string, JsonSchema> }): AddRouteDeclaration {
  const { path, field, summary, operationId, extra = {} } = route;
  return {
    path,
    summary,
    operationId,
    body: { type: 'object', required: [field], additionalProperties: false, properties: { [field]: { type: 'string', format: 'uri', maxLength: 2000 }, ...extra } },
    toSpec: (body) => ({ spec: { url: body.httpUrl(field) } }),
  };
}
