import { definePlugin, defineSource } from '../../core/define.ts';
import { Tokens } from '../../core/di-tokens.ts';
import { matchWebsiteUrl, websiteAddRoutes } from './add-route.ts';
import { websiteOptionsSchema, websiteSpecSchema } from './options.ts';
import { websiteName } from './urls.ts';
import { WebsiteSource } from './website-source.ts';

export default definePlugin({
  name: '@refdesk/source-website',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineSource({
      kind: 'website',
      title: 'Website (crawled)',
      idPrefix: 'websites',
      description: 'A documentation website, crawled from a start URL (robots.txt, sitemaps, canonical URLs) into a /websites/<name> library.',
      options: websiteOptionsSchema,
      specSchema: websiteSpecSchema,
      deps: { fetch: Tokens.Fetch },
      deriveId: (spec) => `/websites/${websiteName(String(spec.url ?? ''))}`,
      addRoutes: websiteAddRoutes,
      matchUrl: matchWebsiteUrl,
      policyCategory: 'websites',
      create(options, deps) {
        return new WebsiteSource(options, deps);
      },
    }),
  ],
});
