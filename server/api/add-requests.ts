/**
 * The alias add routes the loaded sources declare (SourceDefinition.addRoutes, e.g. Context7's
 * POST /api/v2/add/repo/github {docsRepoUrl}): which source owns each path, and a body checked
 * and mapped to that source's spec by the owner's `toSpec`. The fields a route declares are the
 * ones it takes (Context7 clients' fields Refdesk does not use among them, ignored); any other is
 * refused. No list of kinds here: the routes come from the plugins.
 */
import type { AddRouteBody, AddRouteDeclaration, JsonSchema, SourceDefinition } from '../../core/define.ts';
import { ConfigError, RefdeskError } from '../../core/errors.ts';
import { objectBody, onlyFields, optionalString, requiredString, type Params } from './params.ts';

/** One alias add route and the source kind it adds to. */
export interface AliasAddRoute {
  kind: string;
  route: AddRouteDeclaration;
  /** The fields its body takes, in the declared order, `libraryTitle` last unless declared. */
  fields: string[];
}

export interface AddRequest {
  /** The source kind that ingests it. */
  kind: string;
  spec: Record<string, unknown>;
  title?: string;
  description?: string;
}

/** The `libraryTitle` field every alias route takes (added to the published body when a route does not declare it). */
export const LIBRARY_TITLE_FIELD: JsonSchema = {
  type: 'string',
  maxLength: 200,
  description: "The library's title; without it, the source's own name for the project (README H1, package name, site name...).",
};

const PATH = /^[a-z0-9][a-z0-9-]*(\/[a-z0-9][a-z0-9-]*)*$/;

/** A route's body schema with `libraryTitle` (the one published in /api/openapi.json). */
export function aliasBodySchema(route: AddRouteDeclaration): JsonSchema {
  const props = (route.body.properties ?? {}) as Record<string, unknown>;
  return Object.hasOwn(props, 'libraryTitle') ? route.body : { ...route.body, properties: { ...props, libraryTitle: LIBRARY_TITLE_FIELD } };
}

/**
 * The alias routes of these sources, in their order. A path declared twice, one that is not
 * lower-case segments, or one under `source/` (the generic route's) is a ConfigError naming both.
 */
export function aliasAddRoutes(sources: Iterable<{ kind: string; def: SourceDefinition }>): Map<string, AliasAddRoute> {
  const routes = new Map<string, AliasAddRoute>();
  for (const { kind, def } of sources) {
    for (const route of def.addRoutes ?? []) {
      const where = `source "${kind}": add route "${String(route.path).slice(0, 80)}"`;
      if (typeof route.path !== 'string' || !PATH.test(route.path) || route.path.startsWith('source/') || route.path === 'source' || route.path === 'openapi-upload') {
        throw new ConfigError(`${where}: a path is lower-case segments under /api/v2/add/ (letters, digits, '-'), not source/... or openapi-upload`);
      }
      const prev = routes.get(route.path);
      if (prev) throw new ConfigError(`${where}: the source "${prev.kind}" declares it already`);
      routes.set(route.path, { kind, route, fields: Object.keys((aliasBodySchema(route).properties ?? {}) as object) });
    }
  }
  return routes;
}

/** A body's fields, read with the API's parameter checks. */
function routeBody(body: Params): AddRouteBody {
  return {
    raw: body,
    required: (name, max) => requiredString(body, name, max),
    optional: (name, max) => optionalString(body, name, max),
    httpUrl: (name) => httpUrl(body, name),
  };
}

function httpUrl(params: Params, name: string): string {
  const v = requiredString(params, name, 2000);
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new RefdeskError('invalid_request', `Parameter "${name}" must be an absolute http(s) URL.`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new RefdeskError('invalid_request', `Parameter "${name}" must be an http or https URL.`);
  if (u.username || u.password) throw new RefdeskError('invalid_request', `Parameter "${name}" must not contain credentials; send a token in its own field.`);
  return v;
}

/** Validates an alias route's body and maps it to its source kind and spec. */
export function parseAddRequest(alias: AliasAddRoute, rawBody: unknown): AddRequest {
  const body = objectBody(rawBody);
  // The library's title when the user gives one; else the source's own name for the project.
  const title = optionalString(body, 'libraryTitle', 200)?.trim() || undefined;
  onlyFields(body, alias.fields);
  const mapped = alias.route.toSpec(routeBody(body));
  const req: AddRequest = { kind: alias.kind, spec: mapped.spec, title: mapped.title, description: mapped.description };
  if (!req.title) req.title = title;
  if (req.title === undefined) delete req.title;
  if (req.description === undefined) delete req.description;
  return req;
}
