/**
 * What `refdesk add` and POST /api/v1/refresh take for a git repository (SourceDefinition.cliTarget
 * and refreshFields): an http(s), ssh, `git@host:path` or file:// address, `--branch`, the token from
 * REFDESK_GIT_TOKEN (never argv); a refresh may change the branch or the token (`gitToken`).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CliTargetDeclaration, RefreshField } from '../../core/define.ts';
import { gitRepositoryUrl } from '../../core/git-url.ts';

/** `user@host:path` (scp-style ssh), unless a local path of that name exists. */
const scpLike = (target: string): boolean => /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!\/\/)./.test(target) && !existsSync(resolve(target));

export const gitCliTarget: CliTargetDeclaration = {
  matchTarget: (target) => (scpLike(target) ? 40 : false),
  urlSchemes: ['ssh:', 'git+ssh:', 'file:'],
  fields: [
    { specField: 'branch', flag: 'branch', description: 'the branch (or tag) to index' },
    { specField: 'token', env: 'REFDESK_GIT_TOKEN', description: 'a token for a private repository' },
  ],
  toSpec({ target, values }) {
    gitRepositoryUrl(target); // refused here, before anything is sent, when it is not a repository
    return { spec: { url: target, ...values } };
  },
};

export const gitRefreshFields: readonly RefreshField[] = [
  { field: 'branch', specField: 'branch', maxLength: 250 },
  { field: 'gitToken', specField: 'token', maxLength: 1000 },
];
