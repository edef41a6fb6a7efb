/**
 * `refdesk add <site URL> --source confluence --space KEY [--email E]`, the token from
 * CONFLUENCE_PAT (Data Center) or CONFLUENCE_API_TOKEN (Cloud, with --email): never argv.
 */
import type { CliTargetDeclaration } from '../../core/define.ts';
import { RefdeskError } from '../../core/errors.ts';

export const confluenceCliTarget: CliTargetDeclaration = {
  fields: [
    { specField: 'spaceKey', flag: 'space', description: 'the space key (required)' },
    { specField: 'email', flag: 'email', description: 'the account of a Cloud API token' },
    { specField: 'personalAccessToken', env: 'CONFLUENCE_PAT', description: 'a Data Center personal access token' },
    { specField: 'apiToken', env: 'CONFLUENCE_API_TOKEN', description: 'a Cloud API token' },
  ],
  toSpec({ kind, url, values }) {
    if (!url) throw new RefdeskError('invalid_request', `add --source ${kind}: give the site URL, e.g. https://acme.atlassian.net.`);
    if (!values.spaceKey) throw new RefdeskError('invalid_request', `add --source ${kind}: give the space key with --space KEY.`);
    return { spec: { siteUrl: url.origin, ...values } };
  },
};
