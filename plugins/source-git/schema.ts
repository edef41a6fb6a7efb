import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../../core/schema-types.ts';

/** Defaults of the git source's operator options (config `options.git`); the schema below describes each. */
export const DEFAULT_GIT_OPTIONS = Object.freeze({
  allowFileUrls: false,
  maxFiles: 10_000,
  maxBytes: 100 * 1024 * 1024,
  maxFileBytes: 2 * 1024 * 1024,
  timeoutMs: 600_000,
  attempts: 3,
  retryDelayMs: 1000,
  githubApiUrl: '',
  gitlabApiUrl: '',
  statsTimeoutMs: 5000,
});

export const gitOptionsSchema = Type.Object(
  {
    allowFileUrls: Type.Boolean({ default: DEFAULT_GIT_OPTIONS.allowFileUrls, description: 'Accept file:// repository URLs (they read the server\'s own disk). Off by default.' }),
    maxFiles: Type.Integer({ minimum: 1, default: DEFAULT_GIT_OPTIONS.maxFiles, description: 'Most documentation files one library version may have (more: 422 too_large).' }),
    maxBytes: Type.Integer({ minimum: 1, default: DEFAULT_GIT_OPTIONS.maxBytes, description: 'Most bytes of documentation one library version may have (more: 422 too_large).' }),
    maxFileBytes: Type.Integer({ minimum: 1, default: DEFAULT_GIT_OPTIONS.maxFileBytes, description: 'Bigger documentation files are skipped with a warning.' }),
    timeoutMs: Type.Integer({ minimum: 1000, default: DEFAULT_GIT_OPTIONS.timeoutMs, description: 'Time limit of one git command (clone, fetch), in milliseconds.' }),
    attempts: Type.Integer({ minimum: 1, maximum: 10, default: DEFAULT_GIT_OPTIONS.attempts, description: 'Attempts of each network step before the job fails.' }),
    retryDelayMs: Type.Integer({ minimum: 0, default: DEFAULT_GIT_OPTIONS.retryDelayMs, description: 'Delay before the second attempt, doubled for each further one.' }),
    githubApiUrl: Type.String({ maxLength: 500, pattern: '^(https?://.+)?$', default: DEFAULT_GIT_OPTIONS.githubApiUrl, description: "GitHub API base URL for a repository's stars (GitHub Enterprise: https://host/api/v3). Empty: https://api.github.com, for github.com repositories only." }),
    gitlabApiUrl: Type.String({ maxLength: 500, pattern: '^(https?://.+)?$', default: DEFAULT_GIT_OPTIONS.gitlabApiUrl, description: "GitLab API base URL for a repository's stars. Empty: https://<the repository's host>/api/v4." }),
    statsTimeoutMs: Type.Integer({ minimum: 0, maximum: 60000, default: DEFAULT_GIT_OPTIONS.statsTimeoutMs, description: "Time limit of the stars request to the platform's API, in milliseconds (0 turns it off). A failure only leaves the stars as they were." }),
  },
  { additionalProperties: false },
);
/** Operator options of the git source, after ajv applied the defaults. */
export type GitSourceOptions = Static<typeof gitOptionsSchema>;

/** A library's source parameters. */
export const gitSpecSchema = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'Repository URL: https://host/owner/repo(.git) (GitHub .../tree/<branch>/<folder>, GitLab .../-/tree/<branch>/<folder> and Bitbucket .../src/<branch>/<folder> forms set branch and folder), ssh://git@host/owner/repo.git, git@host:owner/repo.git, or file:///path when the operator allows it.',
    }),
    provider: Type.Optional(StringEnum(['github', 'gitlab', 'bitbucket', 'git'], { description: 'The hosting provider; detected from the host when absent.' })),
    branch: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        pattern: '^(?!-)(?!.*\\.\\.)(?!.*//)[A-Za-z0-9._/+-]+$',
        description: 'Branch of the default version; the repository\'s default branch when absent.',
      }),
    ),
    folder: Type.Optional(
      Type.String({
        maxLength: 500,
        description: 'Only this folder of the repository is read (set from a .../tree/<branch>/<folder> URL); the whole repository when absent.',
      }),
    ),
    token: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        writeOnly: true,
        description: 'Access token for a private repository over https (sealed at rest, never shown).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type GitSpec = Static<typeof gitSpecSchema>;
