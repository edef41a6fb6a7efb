/**
 * GET /api/sources: every source kind this server's config loaded, with its title, the library
 * ID namespace it makes and the JSON Schema of its add payload (`spec`; secret fields are marked
 * `writeOnly`: send them, they are never shown back). Forms and clients build themselves from it
 * and need no list of kinds of their own. Public, like the OpenAPI document.
 */
import type Router from '@koa/router';
import { newRouter } from './router.ts';
import type { Kernel } from '../../core/kernel.ts';
import { secretFields } from '../../core/secrets.ts';
import type { JsonSchema } from '../../core/define.ts';

/** What GET /api/sources lists for one source kind (the web UI's add forms are built from it too). */
export interface SourceKindInfo {
  kind: string;
  title: string;
  description: string;
  idPrefix: string | null;
  /** `spec`: added by its spec (POST /api/v2/add/source/{kind}); `files`: by uploading files. */
  addPayload: 'spec' | 'files';
  /** Where a spec of this kind is added. */
  addUrl: string | null;
  secretFields: string[];
  specSchema: JsonSchema;
}

/** Every source kind this server's config loaded, in load order. */
export function sourceKinds(kernel: Kernel): SourceKindInfo[] {
  return [...kernel.sources.values()].map(({ kind, def }) => ({
    kind,
    title: def.title ?? def.description ?? kind,
    description: def.description ?? '',
    idPrefix: def.idPrefix,
    addPayload: def.addPayload ?? 'spec',
    addUrl: def.addPayload === 'files' ? null : `/api/v2/add/source/${kind}`,
    secretFields: secretFields(def.specSchema),
    specSchema: def.specSchema,
  }));
}

export function sourceRoutes(kernel: Kernel): Router {
  const r = newRouter();
  r.get('/api/sources', (ctx) => {
    ctx.body = { sources: sourceKinds(kernel) };
  });
  return r;
}
