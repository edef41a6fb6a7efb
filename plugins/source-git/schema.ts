import type { JsonSchema } from '../../core/define.ts';

/** Operator options of the git source (config `options.git`). */
export interface GitSourceOptions {
  /** Accept file:// URLs (they read the server's own disk). */
  allowFileUrls: boolean;
  /** Most documentation files one library version may have. */
  maxFiles: number;
  /** Most bytes of documentation (selected files, before includes) one library version may have. */
  maxBytes: number;
  /** Bigger documentation files are skipped with a warning. */
  maxFileBytes: number;
  /** Time limit of one git command, in milliseconds. */
  timeoutMs: number;
  /** Attempts of each network step (ls-remote, clone, fetch) before the job fails. */
  attempts: number;
  /** Delay before the second attempt, doubled for each further one. */
  retryDelayMs: number;
  /** GitHub's API base URL for stars; '' is https://api.github.com (github.com repositories only). */
  githubApiUrl: string;
  /** GitLab's API base URL for stars; '' is https://<the repository's host>/api/v4. */
  gitlabApiUrl: string;
  /** Time limit of the stars request to the platform's API, in milliseconds; 0 turns it off. */
  statsTimeoutMs: number;
}

export const DEFAULT_GIT_OPTIONS: GitSourceOptions = Object.freeze({
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

export const gitOptionsSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    allowFileUrls: { type: 'boolean', default: DEFAULT_GIT_OPTIONS.allowFileUrls, description: 'Accept file:// repository URLs (they read the server\'s own disk). Off by default.' },
    maxFiles: { type: 'integer', minimum: 1, default: DEFAULT_GIT_OPTIONS.maxFiles, description: 'Most documentation files one library version may have (more: 422 too_large).' },
    maxBytes: { type: 'integer', minimum: 1, default: DEFAULT_GIT_OPTIONS.maxBytes, description: 'Most bytes of documentation one library version may have (more: 422 too_large).' },
    maxFileBytes: { type: 'integer', minimum: 1, default: DEFAULT_GIT_OPTIONS.maxFileBytes, description: 'Bigger documentation files are skipped with a warning.' },
    timeoutMs: { type: 'integer', minimum: 1000, default: DEFAULT_GIT_OPTIONS.timeoutMs, description: 'Time limit of one git command (clone, fetch), in milliseconds.' },
    attempts: { type: 'integer', minimum: 1, maximum: 10, default: DEFAULT_GIT_OPTIONS.attempts, description: 'Attempts of each network step before the job fails.' },
    retryDelayMs: { type: 'integer', minimum: 0, default: DEFAULT_GIT_OPTIONS.retryDelayMs, description: 'Delay before the second attempt, doubled for each further one.' },
    githubApiUrl: { type: 'string', maxLength: 500, pattern: '^(https?://.+)?$', default: DEFAULT_GIT_OPTIONS.githubApiUrl, description: "GitHub API base URL for a repository's stars (GitHub Enterprise: https://host/api/v3). Empty: https://api.github.com, for github.com repositories only." },
    gitlabApiUrl: { type: 'string', maxLength: 500, pattern: '^(https?://.+)?$', default: DEFAULT_GIT_OPTIONS.gitlabApiUrl, description: "GitLab API base URL for a repository's stars. Empty: https://<the repository's host>/api/v4." },
    statsTimeoutMs: { type: 'integer', minimum: 0, maximum: 60000, default: DEFAULT_GIT_OPTIONS.statsTimeoutMs, description: "Time limit of the stars request to the platform's API, in milliseconds (0 turns it off). A failure only leaves the stars as they were." },
  },
};

/** A library's source parameters. */
export const gitSpecSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: {
      type: 'string',
      minLength: 1,
      maxLength: 2000,
      description: 'Repository URL: https://host/owner/repo(.git) (GitHub .../tree/<branch>/<folder>, GitLab .../-/tree/<branch>/<folder> and Bitbucket .../src/<branch>/<folder> forms set branch and folder), ssh://git@host/owner/repo.git, git@host:owner/repo.git, or file:///path when the operator allows it.',
    },
    provider: { type: 'string', enum: ['github', 'gitlab', 'bitbucket', 'git'], description: 'The hosting provider; detected from the host when absent.' },
    branch: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      pattern: '^(?!-)(?!.*\\.\\.)(?!.*//)[A-Za-z0-9._/+-]+$',
      description: 'Branch of the default version; the repository\'s default branch when absent.',
    },
    folder: {
      type: 'string',
      maxLength: 500,
      description: 'Only this folder of the repository is read (set from a .../tree/<branch>/<folder> URL); the whole repository when absent.',
    },
    token: {
      type: 'string',
      minLength: 1,
      maxLength: 1000,
      writeOnly: true,
      description: 'Access token for a private repository over https (sealed at rest, never shown).',
    },
  },
};
