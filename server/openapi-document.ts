/**
 * The OpenAPI 3.1 description of Refdesk's public API, served at /api/openapi.json. Paths are
 * relative to the server URL `/api` (as Context7's are), so a client generated from it calls
 * `<base>/api/v2/context`.
 */
import { POLICY_PATCH_SCHEMA, SOURCE_TYPES } from './access/policy.ts';
import { KERNEL_VERSION } from '../core/version.ts';

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const resp = (name: string) => ({ $ref: `#/components/responses/${name}` });
const json = (schema: Json) => ({ 'application/json': { schema } });
const errorResponse = (description: string, example: { error: string; message: string }): Json => ({
  description,
  content: { 'application/json': { schema: ref('Error'), example } },
});

const rateLimitHeaders = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimitLimit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimitRemaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimitReset' },
};
const cacheHeaders = {
  ETag: { description: 'Entity tag of the answer; send it back in If-None-Match to get a 304.', schema: { type: 'string' } },
  'Cache-Control': { description: 'How long the answer may be reused (private, max-age).', schema: { type: 'string' } },
  ...rateLimitHeaders,
};

/** GET /api/ready (server/routes/health.ts): readiness for load balancers, with the store's database state. */
const readyStore: Json = {
  type: 'object',
  required: ['kind'],
  description: "The store: its kind (config slots.store); a store on a database (PostgreSQL) adds the database's state, its schema migrations, how the change feed runs, and the error while the database cannot be used.",
  properties: {
    kind: { type: 'string', examples: ['embedded', 'postgres'] },
    database: { enum: ['ok', 'unavailable', 'not_migrated', 'failed'] },
    migrations: {
      type: 'object',
      properties: { version: { type: 'integer' }, latest: { type: 'integer' }, applied: { type: 'array', items: { type: 'integer' } }, skipped: { type: 'array', items: { type: 'integer' } } },
    },
    changeFeed: { enum: ['listen', 'poll'] },
    error: ref('Error'),
  },
};
const readyAnswer: Json = {
  type: 'object',
  required: ['ready', 'status', 'license', 'reasons', 'checks', 'store'],
  properties: {
    ready: { type: 'boolean' },
    status: { enum: ['ready', 'unavailable'] },
    license: { enum: ['valid', 'expiring', 'expired'] },
    reasons: { type: 'array', items: { type: 'string' } },
    checks: { type: 'object', properties: { store: { enum: ['ok', 'failed'] }, jobs: { enum: ['ok', 'stopped'] }, disk: { type: 'object' } } },
    store: readyStore,
  },
};
const readyPath: Json = {
  get: {
    summary: 'Readiness of this node',
    description: 'For load balancers: 200 when this node can serve (its store and database answer and are migrated, the job runner runs, DATA_DIR has room); 503 otherwise, with the reasons. Public, never rate-limited. /api/health (and /ping) say only that the process answers.',
    operationId: 'ready',
    tags: ['Health'],
    security: [{}],
    responses: {
      '200': { description: 'Ready.', content: json(readyAnswer) },
      '503': {
        description: 'Not ready: `database_unavailable` (the database cannot be reached), `database_not_migrated` (run `refdesk db migrate`) or another store code, else `not_ready`.',
        content: {
          'application/json': {
            schema: { allOf: [ref('Error'), readyAnswer] },
            example: { error: 'database_unavailable', message: 'store: Cannot reach PostgreSQL at db:5432/refdesk (connection refused); check DATABASE_URL and that the server is running.' },
          },
        },
      },
    },
  },
};

const optionalKey = [{}, { bearerAuth: [] }];
const keyRequired = [{ bearerAuth: [] }];

const common = { '401': resp('Unauthorized'), '429': resp('RateLimited'), '500': resp('InternalError') };

const addResponses = {
  '200': { description: 'The library was created (not finalized yet) and its ingest queued.', headers: rateLimitHeaders, content: json(ref('AddLibraryResponse')) },
  '400': resp('BadRequest'),
  '409': resp('Conflict'),
  ...common,
};

function addRepo(provider: string, summary: string): Json {
  return {
    post: {
      summary,
      operationId: `addRepo${provider[0].toUpperCase()}${provider.slice(1)}`,
      tags: ['Add Library'],
      requestBody: { required: true, content: json(ref('AddRepoRequest')) },
      responses: addResponses,
      security: keyRequired,
    },
  };
}

const LIBRARY_TITLE: Json = { type: 'string', maxLength: 200, description: "The library's title; without it, the source's own name for the project (README H1, package name, site name...)." };

function addUrl(op: string, field: string, summary: string, extra: Json = {}): Json {
  return {
    post: {
      summary,
      operationId: op,
      tags: ['Add Library'],
      requestBody: {
        required: true,
        content: json({ type: 'object', required: [field], additionalProperties: false, properties: { [field]: { type: 'string', format: 'uri', maxLength: 2000 }, libraryTitle: LIBRARY_TITLE, ...extra } }),
      },
      responses: addResponses,
      security: keyRequired,
    },
  };
}

const listOperation = { type: 'object', properties: { add: { type: 'array', items: { type: 'string' } }, remove: { type: 'array', items: { type: 'string' } }, clear: { type: 'boolean' } } };
const nullableInt = { type: ['integer', 'null'] };

/** The document (a fresh object each call). */
export function openApiDocument(): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Refdesk API',
      version: KERNEL_VERSION,
      description:
        'Library documentation retrieval: find libraries, get the documentation snippets that answer a question, add and refresh libraries, and set the server\'s access policy. The shape follows the Context7 public API, so Context7 clients work against Refdesk.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/api', description: 'This Refdesk server' }],
    tags: [
      { name: 'Search' },
      { name: 'Context' },
      { name: 'Refresh' },
      { name: 'Policies' },
      { name: 'Add Library' },
      { name: 'Health' },
    ],
    paths: {
      '/ready': readyPath,
      '/v2/libs/search': {
        get: {
          summary: 'Search libraries',
          description: "Libraries matching a name, best first: by name match and the library's quality signals, then re-ranked by the question and, when the server has an LLM configured, by one LLM call (unless fast=true). Libraries the policy hides are left out.",
          operationId: 'searchLibraries',
          tags: ['Search'],
          parameters: [{ $ref: '#/components/parameters/LibraryName' }, { $ref: '#/components/parameters/Query' }, { $ref: '#/components/parameters/Fast' }],
          responses: {
            '200': { description: 'Matching libraries, best first', headers: cacheHeaders, content: json(ref('SearchResponse')) },
            '304': { description: 'Not modified (If-None-Match matched the ETag)', headers: cacheHeaders },
            '400': resp('BadRequest'),
            ...common,
            '503': resp('SearchUnavailable'),
            '504': resp('Timeout'),
          },
          security: optionalKey,
        },
      },
      '/v2/context': {
        get: {
          summary: 'Get documentation context',
          description: 'The documentation snippets of a library that answer a question, best first, within a token budget. When the server has an LLM configured, its best candidates are reranked by one LLM call unless fast=true (an extension of the Context7 API); a failing LLM leaves the lexical order.',
          operationId: 'getContext',
          tags: ['Context'],
          parameters: [
            { $ref: '#/components/parameters/LibraryId' },
            { $ref: '#/components/parameters/Query' },
            { name: 'type', in: 'query', required: false, description: 'Answer format: readable text (default) or JSON.', schema: { type: 'string', enum: ['json', 'txt'], default: 'txt' } },
            { name: 'tokens', in: 'query', required: false, description: 'Token budget of the answer; clamped to the server\'s bounds (by default 500-100000, default 5000).', schema: { type: 'integer', minimum: 1 } },
            { $ref: '#/components/parameters/Fast' },
          ],
          responses: {
            '200': {
              description: 'Documentation context',
              headers: cacheHeaders,
              content: { 'application/json': { schema: ref('ContextResponse') }, 'text/plain': { schema: { type: 'string' } } },
            },
            '202': errorResponse('The library is not finalized yet: wait and retry.', { error: 'library_not_finalized', message: 'Library "/owner/repo" is still being processed; try again in a moment.' }),
            '301': {
              description: 'The library was renamed; redirectUrl is its new ID.',
              content: { 'application/json': { schema: ref('RedirectError'), example: { error: 'library_redirected', message: 'Library /old/repo has been redirected to this library: /new/repo.', redirectUrl: '/new/repo' } } },
            },
            '304': { description: 'Not modified (If-None-Match matched the ETag)', headers: cacheHeaders },
            '400': resp('BadRequest'),
            '403': resp('AccessDenied'),
            '404': resp('NotFound'),
            '422': errorResponse('The library (version) serves nothing because its last build failed (build_failed, or no_documentation / too_large); the message gives the reason and how to retry.', {
              error: 'build_failed',
              message: 'The build of library /owner/repo failed (job 0b6e...): GET https://example.com/llms.txt answered 500. Fix the source if needed, then add the same source again or refresh it (POST /api/v1/refresh {"libraryName": "/owner/repo"}) to retry.',
            }),
            ...common,
            '503': resp('SearchUnavailable'),
            '504': resp('Timeout'),
          },
          security: optionalKey,
        },
      },
      '/v1/refresh': {
        post: {
          summary: 'Refresh a library',
          description: "Queues a new build of a library from its source; the current documentation is served until the new build is finalized. Needs an API key, unless the operator turned anonymous refresh On (then callers without a key may refresh, without branch or gitToken).",
          operationId: 'refreshLibrary',
          tags: ['Refresh'],
          requestBody: {
            required: true,
            content: json({
              type: 'object',
              required: ['libraryName'],
              additionalProperties: false,
              properties: {
                libraryName: { type: 'string', minLength: 1, maxLength: 500, description: 'The library ID, optionally with a pinned version.' },
                branch: { type: 'string', description: 'git libraries: the branch to build.' },
                gitToken: { type: 'string', writeOnly: true, description: 'git libraries: an access token (stored sealed).' },
              },
            }),
          },
          responses: {
            '200': {
              description: 'Refresh queued',
              headers: rateLimitHeaders,
              content: json({ type: 'object', required: ['message'], properties: { message: { type: 'string' }, libraryName: { type: 'string' }, jobId: { type: 'string' } } }),
            },
            '301': { description: 'The library was renamed', content: json(ref('RedirectError')) },
            '400': resp('BadRequest'),
            '403': resp('AccessDenied'),
            '404': resp('NotFound'),
            ...common,
          },
          security: keyRequired,
        },
      },
      '/v2/policies': {
        get: {
          summary: "Get the server's policy",
          operationId: 'getPolicies',
          tags: ['Policies'],
          responses: { '200': { description: 'The policy', headers: rateLimitHeaders, content: json(ref('PolicyResponse')) }, ...common },
          security: keyRequired,
        },
        patch: {
          summary: "Update the server's policy",
          description: 'Only the fields given change. Source types: enable/disable arrays. Lists: add/remove arrays or clear: true. Admin keys only.',
          operationId: 'updatePolicies',
          tags: ['Policies'],
          requestBody: { required: true, content: json(POLICY_PATCH_SCHEMA as unknown as Json) },
          responses: {
            '200': { description: 'The updated policy', headers: rateLimitHeaders, content: json(ref('PolicyResponse')) },
            '400': resp('BadRequest'),
            '403': resp('Forbidden'),
            ...common,
          },
          security: keyRequired,
        },
      },
      '/v2/add/source/{kind}': {
        post: {
          summary: 'Add a library from any source by its spec',
          description:
            "The body is the source's spec: the JSON Schema GET /api/sources lists as `specSchema` for the kind (secret fields are writeOnly), plus `libraryTitle?` when the schema has no such field. Without a deriveId in the source plugin the library ID is /<idPrefix>/<slug of the spec's first string field>. The other add routes are aliases of this one with Context7's field names.",
          operationId: 'addSource',
          tags: ['Add Library'],
          parameters: [{ name: 'kind', in: 'path', required: true, description: 'A source kind GET /api/sources lists (e.g. git, website, or a third-party plugin\'s kind).', schema: { type: 'string', pattern: '^[a-z][a-z0-9-]*$' } }],
          requestBody: { required: true, content: json({ type: 'object', description: "The kind's spec (GET /api/sources).", additionalProperties: true }) },
          responses: {
            '202': {
              description: 'The library was created (not finalized yet) and its ingest queued (or the job already queued or running for it).',
              headers: rateLimitHeaders,
              content: json({
                type: 'object',
                required: ['libraryName', 'libraryId', 'jobId', 'message'],
                properties: {
                  libraryName: { type: 'string' },
                  libraryId: { type: 'string' },
                  jobId: { type: 'string' },
                  state: { type: 'string' },
                  statusUrl: { type: 'string' },
                  eventsUrl: { type: 'string' },
                  logUrl: { type: 'string' },
                  message: { type: 'string' },
                },
              }),
            },
            '400': resp('BadRequest'),
            '404': errorResponse('No source of this kind is loaded', { error: 'not_found', message: 'No source of kind "notion" on this server. Its sources: upload, git, website.' }),
            '409': resp('Conflict'),
            ...common,
          },
          security: keyRequired,
        },
      },
      '/v2/add/repo/github': addRepo('github', 'Add a GitHub repository'),
      '/v2/add/repo/gitlab': addRepo('gitlab', 'Add a GitLab repository'),
      '/v2/add/repo/bitbucket': addRepo('bitbucket', 'Add a Bitbucket repository'),
      '/v2/add/repo/git': addRepo('git', 'Add a repository from any git host (https, ssh or file URL)'),
      '/v2/add/openapi': addUrl('addOpenApi', 'openApiUrl', 'Add an OpenAPI specification by URL'),
      '/v2/add/openapi-upload': {
        post: {
          summary: 'Upload an OpenAPI specification file (10 MB at most)',
          operationId: 'addOpenApiUpload',
          tags: ['Add Library'],
          requestBody: {
            required: true,
            content: {
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  required: ['openapiFile'],
                  properties: {
                    openapiFile: { type: 'string', contentMediaType: 'application/octet-stream' },
                    libraryTitle: { type: 'string', description: 'Names the library /openapi/<slug of the title>; the file name when absent.' },
                    force: { type: 'string', enum: ['true'], description: 'Replace the specification of an existing library.' },
                  },
                },
              },
            },
          },
          responses: { ...addResponses, '422': errorResponse('The file is larger than the upload limit.', { error: 'too_large', message: 'The specification file is larger than 10485760 bytes (10 MB), the limit for uploads.' }) },
          security: keyRequired,
        },
      },
      '/v2/add/llmstxt': addUrl('addLlmsTxt', 'llmstxtUrl', 'Add an llms.txt file'),
      '/v2/add/website': addUrl('addWebsite', 'websiteUrl', 'Add a website', { websiteBaseUrl: { type: 'string', format: 'uri', description: 'Accepted for Context7 compatibility; not used.' } }),
      '/v2/add/confluence': {
        post: {
          summary: 'Add a Confluence space',
          operationId: 'addConfluence',
          tags: ['Add Library'],
          requestBody: {
            required: true,
            content: json({
              type: 'object',
              required: ['siteUrl', 'spaceKey'],
              properties: {
                siteUrl: { type: 'string', format: 'uri' },
                spaceKey: { type: 'string' },
                rootPageId: { type: 'string' },
                deployment: { type: 'string', enum: ['cloud', 'server'] },
                email: { type: 'string' },
                apiToken: { type: 'string', writeOnly: true },
                personalAccessToken: { type: 'string', writeOnly: true },
                title: { type: 'string' },
                description: { type: 'string' },
                spaceName: { type: 'string' },
                cloudId: { type: 'string' },
                pageIds: { type: 'array', items: { type: 'string' } },
                projectId: { type: 'string' },
                libraryTitle: LIBRARY_TITLE,
              },
            }),
          },
          responses: addResponses,
          security: keyRequired,
        },
      },
    },
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'A Refdesk API key (rdk_...). Without a key the search and context endpoints work at lower rate limits.' },
      },
      parameters: {
        LibraryName: { name: 'libraryName', in: 'query', required: true, description: 'The library name to look for.', schema: { type: 'string', minLength: 1, maxLength: 500 } },
        Query: { name: 'query', in: 'query', required: true, description: 'The question or task.', schema: { type: 'string', minLength: 1, maxLength: 500 } },
        LibraryId: {
          name: 'libraryId',
          in: 'query',
          required: true,
          description: 'Library ID: /owner/repo, a GitLab project path with its subgroups (/group/sub/project) or /<source>/<name>, optionally followed by /<version> or @<version> (pin versions of IDs with more than two segments with @).',
          schema: { type: 'string', minLength: 1, maxLength: 500, pattern: '^/[^/]+/[^/]+(/[^/]+)*(@[^/]+)?$' },
        },
        Fast: { name: 'fast', in: 'query', required: false, description: 'true skips re-ranking (the LLM reranking of a server with an LLM configured, and library search\'s question stage): faster, lexical order.', schema: { type: 'string', enum: ['true', 'false'], default: 'false' } },
      },
      headers: {
        RateLimitLimit: { description: 'Requests allowed in the current window.', schema: { type: 'integer' } },
        RateLimitRemaining: { description: 'Requests left in the current window.', schema: { type: 'integer' } },
        RateLimitReset: { description: 'Unix time (seconds) when the window resets.', schema: { type: 'integer' } },
      },
      responses: {
        BadRequest: errorResponse('Invalid parameters: the message says which and why.', { error: 'invalid_request', message: 'Missing required parameter "query".' }),
        Unauthorized: errorResponse('Invalid, mis-formatted, revoked or (where required) missing API key.', { error: 'invalid_api_key', message: 'The API key is mis-formatted.' }),
        Forbidden: errorResponse('The key may not do this.', { error: 'forbidden', message: 'Changing the policy needs an admin key.' }),
        AccessDenied: errorResponse("The server's policy hides this library.", { error: 'access_denied', message: 'Access denied: library /owner/repo is not available on this server.' }),
        NotFound: errorResponse('Unknown library or version.', { error: 'library_not_found', message: 'Library "/owner/repo" not found. Check the library ID or your access permissions.' }),
        Conflict: errorResponse('The library is already added.', { error: 'already_exists', message: 'Library /owner/repo is already added.' }),
        RateLimited: {
          description: 'Too many requests',
          headers: { 'Retry-After': { description: 'Seconds until the window resets.', schema: { type: 'integer' } }, ...rateLimitHeaders },
          content: { 'application/json': { schema: ref('Error'), example: { error: 'rate_limit_exceeded', message: 'Rate limit exceeded.' } } },
        },
        InternalError: errorResponse('Internal server error', { error: 'internal_error', message: 'Internal server error.' }),
        SearchUnavailable: errorResponse('The search backend failed; retry later.', { error: 'search_failed', message: 'Documentation search is unavailable right now.' }),
        Timeout: errorResponse('The request did not finish in time.', { error: 'processing_timeout', message: 'Documentation search did not finish within 30000 ms.' }),
      },
      schemas: {
        Error: { type: 'object', required: ['error', 'message'], properties: { error: { type: 'string' }, message: { type: 'string' } } },
        RedirectError: { allOf: [ref('Error'), { type: 'object', required: ['redirectUrl'], properties: { redirectUrl: { type: 'string', description: 'The new library ID.' } } }] },
        Library: {
          type: 'object',
          required: ['id', 'title', 'description', 'branch', 'lastUpdateDate', 'state', 'totalTokens', 'totalSnippets', 'stars', 'trustScore', 'benchmarkScore', 'versions'],
          properties: {
            id: { type: 'string' },
            title: { type: 'string' },
            description: { type: 'string' },
            branch: { type: 'string' },
            lastUpdateDate: { type: ['string', 'null'], format: 'date-time' },
            state: { type: 'string', enum: ['finalized', 'initial', 'processing', 'error', 'delete'] },
            totalTokens: { type: 'integer' },
            totalSnippets: { type: 'integer' },
            stars: { type: 'number', description: "Stars on the repository's platform (GitHub, GitLab) when its API answered at the last build; else 0." },
            trustScore: { type: 'number', minimum: 0, maximum: 10, description: 'An integer: provenance, stars, freshness and completeness of the last build (docs/library-scores.md).' },
            benchmarkScore: { type: 'number', minimum: 0, maximum: 100, description: 'Share (%) of up to 100 sampled sections found by their own heading among the first 5 answers (docs/library-scores.md).' },
            versions: { type: 'array', items: { type: 'string' } },
          },
        },
        SearchResponse: { type: 'object', required: ['results', 'searchFilterApplied'], properties: { results: { type: 'array', items: ref('Library') }, searchFilterApplied: { type: 'boolean' } } },
        SnippetSource: {
          type: 'object',
          required: ['path', 'lineStart', 'lineEnd'],
          properties: { path: { type: 'string' }, url: { type: 'string' }, lineStart: { type: 'integer' }, lineEnd: { type: 'integer' } },
        },
        CodeSnippet: {
          type: 'object',
          required: ['codeTitle', 'codeDescription', 'codeLanguage', 'codeTokens', 'codeId', 'pageTitle', 'codeList'],
          properties: {
            codeTitle: { type: 'string' },
            codeDescription: { type: 'string' },
            codeLanguage: { type: 'string' },
            codeTokens: { type: 'integer' },
            codeId: { type: 'string' },
            pageTitle: { type: 'string' },
            codeList: { type: 'array', items: { type: 'object', required: ['language', 'code'], properties: { language: { type: 'string' }, code: { type: 'string' } } } },
            breadcrumb: { type: 'string' },
            source: ref('SnippetSource'),
          },
        },
        InfoSnippet: {
          type: 'object',
          required: ['content', 'contentTokens'],
          properties: { pageId: { type: 'string' }, breadcrumb: { type: 'string' }, content: { type: 'string' }, contentTokens: { type: 'integer' }, source: ref('SnippetSource') },
        },
        ContextResponse: {
          type: 'object',
          required: ['codeSnippets', 'infoSnippets'],
          properties: { codeSnippets: { type: 'array', items: ref('CodeSnippet') }, infoSnippets: { type: 'array', items: ref('InfoSnippet') } },
        },
        AddRepoRequest: {
          type: 'object',
          required: ['docsRepoUrl'],
          properties: {
            docsRepoUrl: { type: 'string', description: 'https URL of the repository (the git endpoint also takes ssh and file URLs).' },
            gitToken: { type: 'string', writeOnly: true, description: 'Access token for a private repository; stored sealed.' },
            branch: { type: 'string' },
            private: { type: 'boolean', description: 'Accepted for Context7 compatibility; a gitToken makes a repository private.' },
            skipVersionFiltering: { type: 'boolean', description: 'Accepted for Context7 compatibility; not used.' },
            generateDocs: { type: 'boolean', description: 'Accepted for Context7 compatibility; not used.' },
            libraryTitle: LIBRARY_TITLE,
          },
        },
        AddLibraryResponse: { type: 'object', required: ['libraryName', 'message'], properties: { libraryName: { type: 'string' }, message: { type: 'string' }, jobId: { type: 'string' } } },
        SourceTypeStatus: { type: 'object', required: ['enabled'], properties: { enabled: { type: 'boolean' } } },
        PolicyResponse: {
          type: 'object',
          required: ['sourceTypes', 'libraryFilters', 'accessibleLibraryCount'],
          properties: {
            sourceTypes: { type: 'object', required: [...SOURCE_TYPES], properties: Object.fromEntries(SOURCE_TYPES.map((t) => [t, ref('SourceTypeStatus')])) },
            libraryFilters: {
              type: 'object',
              required: ['mode', 'quality', 'select'],
              properties: {
                mode: { enum: ['quality', 'select', null] },
                quality: {
                  type: 'object',
                  properties: {
                    requireVerified: { type: 'boolean' },
                    minTrustScore: nullableInt,
                    maxAgeDays: nullableInt,
                    blockedLibraries: { type: 'array', items: { type: 'string' } },
                    exceptedLibraries: { type: 'array', items: { type: 'string' } },
                    repoFilters: { type: 'object', properties: { minStars: nullableInt, allowedLicenses: { type: 'array', items: { type: 'string' } } } },
                    websiteFilters: { type: 'object', properties: { minBacklinks: nullableInt, minReferringDomains: nullableInt, minOrganicTraffic: nullableInt } },
                  },
                },
                select: { type: 'object', properties: { allowedLibraries: { type: 'array', items: { type: 'string' } } } },
              },
            },
            accessibleLibraryCount: { type: 'integer' },
          },
        },
        ListOperation: listOperation,
      },
    },
  };
}
