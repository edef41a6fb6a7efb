import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../../core/schema-types.ts';

/** Defaults of the operator options (config); the schema below describes each. */
export const DEFAULT_CONFLUENCE_OPTIONS = Object.freeze({
  pageSize: 100,
  maxPages: 5000,
  maxAttempts: 4,
  retryBaseMs: 1000,
  maxRetryWaitMs: 30_000,
});

export const confluenceOptionsSchema = Type.Object(
  {
    pageSize: Type.Integer({
      minimum: 1,
      maximum: 250,
      default: DEFAULT_CONFLUENCE_OPTIONS.pageSize,
      description: 'Results asked for per listing request (Cloud allows at most 250).',
    }),
    maxPages: Type.Integer({
      minimum: 1,
      default: DEFAULT_CONFLUENCE_OPTIONS.maxPages,
      description: 'Most Confluence pages one library may hold; bigger spaces fail with a clear error (pick a subtree with rootPageId).',
    }),
    maxAttempts: Type.Integer({
      minimum: 1,
      maximum: 10,
      default: DEFAULT_CONFLUENCE_OPTIONS.maxAttempts,
      description: 'Attempts per request when Confluence answers 429 or 5xx, or cannot be reached.',
    }),
    retryBaseMs: Type.Integer({
      minimum: 0,
      default: DEFAULT_CONFLUENCE_OPTIONS.retryBaseMs,
      description: 'First back-off delay in milliseconds, doubled per attempt, when Confluence sends no Retry-After.',
    }),
    maxRetryWaitMs: Type.Integer({
      minimum: 0,
      default: DEFAULT_CONFLUENCE_OPTIONS.maxRetryWaitMs,
      description: 'Longest wait between two attempts in milliseconds (also caps Retry-After).',
    }),
  },
  { additionalProperties: false },
);
/** Operator options (config), with the defaults ajv fills in. */
export type ConfluenceOptions = Static<typeof confluenceOptionsSchema>;

/** A library's source parameters. Secret fields are writeOnly: sealed at rest by the kernel. */
export const confluenceSpecSchema = Type.Object(
  {
    siteUrl: Type.String({
      minLength: 1,
      maxLength: 2000,
      pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
      description: 'The Confluence site: https://<site>.atlassian.net for Cloud, or the base URL of a Server/Data Center instance (with its context path, e.g. https://wiki.example.com/confluence).',
    }),
    spaceKey: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[^\\s/?#&]+$',
      description: 'The key of the space to read, e.g. ENG (personal spaces: ~username).',
    }),
    rootPageId: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,20}$',
        description: 'Read only this page and the pages below it (its numeric page ID).',
      }),
    ),
    deployment: Type.Optional(
      StringEnum(['cloud', 'server'], {
        description: 'cloud (REST v2) or server for Server/Data Center (REST v1). Default: cloud for *.atlassian.net, else server.',
      }),
    ),
    email: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 320,
        description: 'With apiToken, for Basic auth: the Atlassian account email (Cloud) or the user name (Server/Data Center).',
      }),
    ),
    apiToken: Type.Optional(
      Type.String({
        minLength: 1,
        writeOnly: true,
        description: 'An Atlassian API token (Cloud) or the password/token of the user (Server/Data Center), used with email.',
      }),
    ),
    personalAccessToken: Type.Optional(
      Type.String({
        minLength: 1,
        writeOnly: true,
        description: 'A personal access token (Server/Data Center 7.9+), sent as a Bearer token.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ConfluenceSpec = Static<typeof confluenceSpecSchema>;
