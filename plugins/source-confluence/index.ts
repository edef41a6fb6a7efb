import { definePlugin, defineSource } from '../../core/define.ts';
import { Tokens } from '../../core/di-tokens.ts';
import { confluenceAddRoutes, matchConfluenceUrl } from './add-route.ts';
import { confluenceCliTarget } from './cli-target.ts';
import { ConfluenceSource } from './confluence-source.ts';
import { confluenceOptionsSchema, confluenceSpecSchema } from './schema.ts';
import { deriveConfluenceId } from './spec.ts';

export default definePlugin({
  name: '@refdesk/source-confluence',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineSource({
      kind: 'confluence',
      title: 'Confluence space',
      idPrefix: 'confluence',
      description:
        'A Confluence space (Cloud REST v2 or Server/Data Center REST v1), or a page subtree, becomes a /confluence/<site>_<space> library; refreshes re-read only pages whose version changed.',
      options: confluenceOptionsSchema,
      specSchema: confluenceSpecSchema,
      deps: { fetch: Tokens.Fetch, logger: Tokens.Logger },
      deriveId: deriveConfluenceId,
      addRoutes: confluenceAddRoutes,
      matchUrl: matchConfluenceUrl,
      policyCategory: 'confluence',
      cliTarget: confluenceCliTarget,
      create(options, deps) {
        return new ConfluenceSource(options, deps);
      },
    }),
  ],
});
