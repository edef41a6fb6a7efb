import { definePlugin, defineSource } from '../../core/define.ts';
import { Tokens } from '../../core/di-tokens.ts';
import { gitAddRoutes, gitPolicyCategory, matchGitUrl } from './add-route.ts';
import { gitCliTarget, gitRefreshFields } from './cli-target.ts';
import { GitSource } from './git-source.ts';
import { gitParseAddress } from './parse-address.ts';
import { deriveGitLibraryId } from './git-url.ts';
import { gitOptionsSchema, gitSpecSchema } from './schema.ts';

export default definePlugin({
  name: '@refdesk/source-git',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineSource({
      kind: 'git',
      title: 'Git repository',
      idPrefix: null,
      description: 'A git repository (GitHub, GitLab, Bitbucket or any git server; https, ssh or file://) becomes an /owner/repo library; tags are its versions.',
      options: gitOptionsSchema,
      specSchema: gitSpecSchema,
      deriveId: deriveGitLibraryId,
      addRoutes: gitAddRoutes,
      matchUrl: matchGitUrl,
      policyCategory: gitPolicyCategory,
      cliTarget: gitCliTarget,
      refreshFields: gitRefreshFields,
      parseAddress: gitParseAddress,
      deps: { policy: Tokens.NetworkPolicy, logger: Tokens.Logger, fetch: Tokens.Fetch, credentials: Tokens.GitCredentials },
      create(options, deps) {
        return new GitSource(options, deps);
      },
    }),
  ],
});
