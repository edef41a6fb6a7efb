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

/** Titles of the built-in kinds; other plugins' kinds use their definition's description. */
const TITLES: Record<string, string> = {
  git: 'Git repository',
  upload: 'Uploaded files or archive',
  website: 'Website (crawled)',
  llmstxt: 'llms.txt',
  openapi: 'OpenAPI / Swagger specification',
  confluence: 'Confluence space',
  npm: 'npm package',
  pypi: 'PyPI package',
  packages: 'Package (npm or PyPI)',
};

/** What GET /api/sources lists for one source kind (the web UI's add forms are built from it too). */
export interface SourceKindInfo {
  kind: string;
  title: string;
  description: string;
  idPrefix: string | null;
  secretFields: string[];
  specSchema: JsonSchema;
}

/** Every source kind this server's config loaded, in load order. */
export function sourceKinds(kernel: Kernel): SourceKindInfo[] {
  return [...kernel.sources.values()].map(({ kind, def }) => ({
    kind,
    title: TITLES[kind] ?? def.description ?? kind,
    description: def.description ?? '',
    idPrefix: def.idPrefix,
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
