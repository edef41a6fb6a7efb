import { Type } from '@sinclair/typebox';
import { defineChunker, definePlugin, defineSource } from '../../core/define.ts';
import { Tokens } from '../../core/di-tokens.ts';
import { matchOpenApiUrl, openApiAddRoutes, openApiPolicyCategory } from './add-route.ts';
import { deriveOpenApiId } from './derive-id.ts';
import { OperationChunker } from './operation-chunker.ts';
import { openApiOptionsSchema, openApiSpecSchema } from './options.ts';
import { OpenApiSource } from './openapi-source.ts';
import { openApiSpecUpload } from './spec-upload.ts';

export default definePlugin({
  name: '@refdesk/source-openapi',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineSource({
      kind: 'openapi',
      title: 'OpenAPI / Swagger specification',
      idPrefix: 'openapi',
      description: 'An OpenAPI 3.0/3.1 or Swagger 2.0 spec (URL or uploaded file): one code snippet per operation with an example curl request.',
      options: openApiOptionsSchema,
      specSchema: openApiSpecSchema,
      deps: { fetch: Tokens.Fetch, env: Tokens.Env, logger: Tokens.Logger },
      deriveId: deriveOpenApiId,
      addRoutes: openApiAddRoutes,
      matchUrl: matchOpenApiUrl,
      policyCategory: openApiPolicyCategory,
      specUpload: openApiSpecUpload,
      create(options, deps) {
        return new OpenApiSource(options, deps);
      },
    }),
    defineChunker({
      kind: 'openapi-operations',
      description: 'The documents of the openapi source: one code snippet per operation, info snippets for tags, overview and authentication.',
      options: Type.Object({ maxInfoTokens: Type.Integer({ minimum: 50, maximum: 5000, default: 600 }) }, { additionalProperties: false }),
      deps: {},
      create: (options) => new OperationChunker(options),
    }),
  ],
});
