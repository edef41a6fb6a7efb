/**
 * refdesk-source-notion: the pages of a Notion workspace as a Refdesk library
 * (`/notion/<slug of the workspace name>`). Each page the integration can see becomes one
 * markdown document (its title as the H1, its blocks below), at `<title>-<page id>.md`.
 *
 *   plugins:                       # a config that extends the default distribution
 *     - use: ./node_modules/refdesk-source-notion/src/index.ts
 *   curl -X POST .../api/v2/add/source/notion -d '{"workspace": "Acme", "token": "secret_..."}'
 *   curl -X POST .../api/v2/add/notion -d '{"workspaceName": "Acme", "integrationToken": "secret_..."}'   # its alias route
 */
import { definePlugin, defineSource, Tokens, type SourceDocument } from 'refdesk/core';
import { NotionClient } from './notion-api.ts';
import { blocksToMarkdown, plainText } from './markdown.ts';

/** The operator's options (config). */
export interface NotionOptions {
  apiUrl: string;
  notionVersion: string;
  pageSize: number;
  maxPages: number;
}

export const notionOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    apiUrl: { type: 'string', pattern: '^https?://', default: 'https://api.notion.com', description: "Notion's API base URL." },
    notionVersion: { type: 'string', default: '2022-06-28', description: 'The Notion-Version header sent with every request.' },
    pageSize: { type: 'integer', minimum: 1, maximum: 100, default: 100, description: 'Results per request (Notion allows 100).' },
    maxPages: { type: 'integer', minimum: 1, default: 1000, description: 'Most pages read for one library.' },
  },
} as const;

/** A library's spec: the add payload of POST /api/v2/add/source/notion. */
export const notionSpecSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['workspace', 'token'],
  properties: {
    workspace: { type: 'string', minLength: 1, maxLength: 100, description: 'A name for the workspace: the library is /notion/<its slug>.' },
    token: { type: 'string', minLength: 1, maxLength: 500, writeOnly: true, description: 'The internal integration secret (sealed at rest, never shown).' },
    query: { type: 'string', maxLength: 200, description: 'Only pages whose title matches this text.' },
  },
} as const;

/** A page's title: its `title` property. */
function titleOf(page: { properties?: Record<string, { type: string; title?: Array<{ plain_text: string }> }> }): string {
  const prop = Object.values(page.properties ?? {}).find((p) => p.type === 'title');
  return plainText(prop?.title).trim() || 'Untitled';
}

const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60) || 'page';

export default definePlugin({
  name: 'refdesk-source-notion',
  version: '0.1.0',
  kernel: '^1.0.0',
  definitions: [
    defineSource({
      kind: 'notion',
      title: 'Notion workspace',
      idPrefix: 'notion',
      description: "The pages of a Notion workspace that an integration can see, read through Notion's API.",
      options: notionOptionsSchema,
      specSchema: notionSpecSchema,
      deps: { fetch: Tokens.Fetch },
      // No deriveId: the library ID is /notion/<slug of the first string field, `workspace`>.
      // A Context7-style alias beside POST /api/v2/add/source/notion, with its own field names.
      addRoutes: [
        {
          path: 'notion',
          summary: 'Add a Notion workspace',
          operationId: 'addNotion',
          body: {
            type: 'object',
            required: ['workspaceName', 'integrationToken'],
            properties: {
              workspaceName: { type: 'string', maxLength: 100, description: 'A name for the workspace: the library is /notion/<its slug>.' },
              integrationToken: { type: 'string', writeOnly: true, description: 'The internal integration secret (sealed at rest, never shown).' },
              titleFilter: { type: 'string', maxLength: 200, description: 'Only pages whose title matches this text.' },
            },
          },
          toSpec(body) {
            const query = body.optional('titleFilter', 200);
            return { spec: { workspace: body.required('workspaceName', 100), token: body.required('integrationToken', 500), ...(query ? { query } : {}) } };
          },
        },
      ],
      create(options: NotionOptions, { fetch }) {
        return {
          async *read(ctx): AsyncGenerator<SourceDocument> {
            ctx.signal.throwIfAborted();
            const client = new NotionClient({ ...options, token: String(ctx.spec.token), fetch, signal: ctx.signal });
            let read = 0;
            for await (const page of client.pages(typeof ctx.spec.query === 'string' ? ctx.spec.query : undefined)) {
              if (page.archived || page.in_trash) continue;
              if (read >= options.maxPages) {
                ctx.log('warn', `stopped after ${options.maxPages} pages (the maxPages option)`);
                break;
              }
              const title = titleOf(page);
              const body = blocksToMarkdown(await client.children(page.id));
              read++;
              ctx.progress({ message: `read ${read} pages` });
              yield {
                path: `${slug(title)}-${page.id.replace(/-/g, '').slice(0, 8)}.md`,
                format: 'markdown',
                title,
                ...(page.url ? { url: page.url } : {}),
                content: `# ${title}\n\n${body}`.trimEnd() + '\n',
              };
            }
            if (read === 0) ctx.log('warn', 'the integration sees no pages: share pages with it in Notion (... > Connections)');
          },
        };
      },
    }),
  ],
});
