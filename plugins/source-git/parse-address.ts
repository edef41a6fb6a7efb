/**
 * POST /api/parse {url} for git (SourceDefinition.parseAddress): the address must be https (or
 * http for a host the operator lists in `parse.allowHttpHosts`) on GitHub, GitLab, Bitbucket or
 * any git host, optionally in a web-page form (`.../tree/<ref>/<folder>`, see core/git-url.ts);
 * `file:`, ssh and scp-style addresses are refused here. Only the address's form is checked.
 */
import type { ParseAddressDeclaration } from '../../core/define.ts';
import { RefdeskError } from '../../core/errors.ts';
import { parseGitRepoUrl } from '../../core/git-url.ts';

const FORMS = 'Give the https address of a git repository, e.g. https://github.com/owner/repo or https://gitlab.com/group/project/-/tree/main/docs.';

/** The repository address of a parse request, checked for form only. */
export function parseRepositoryAddress(raw: string, allowHttpHosts: readonly string[]): { url: string; id: string; provider: string } {
  const text = raw.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    const scp = /^([^\s/@]+@)?[^\s/:]+:/.test(text);
    throw new RefdeskError('invalid_request', scp ? `"url" is an scp-style ssh address (user@host:path), which this endpoint does not take. ${FORMS}` : `"url" is not an absolute URL. ${FORMS}`);
  }
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new RefdeskError('invalid_request', `"url" is not an absolute URL. ${FORMS}`);
  }
  if (u.protocol === 'http:') {
    const host = u.hostname.toLowerCase();
    const hostPort = u.host.toLowerCase();
    if (!allowHttpHosts.some((h) => h.toLowerCase() === host || h.toLowerCase() === hostPort)) {
      throw new RefdeskError('invalid_request', `"url" uses http://, which is allowed only for hosts the operator lists in the config's parse.allowHttpHosts (${host} is not one). Use https://.`);
    }
  } else if (u.protocol !== 'https:') {
    throw new RefdeskError('invalid_request', `"url" uses ${u.protocol.slice(0, 20)}//, which this endpoint does not take (file, ssh and git addresses are refused over HTTP). ${FORMS}`);
  }
  if (u.username || u.password) throw new RefdeskError('invalid_request', '"url" must not contain credentials; an operator adds private repositories with a token through the add routes or settings.');
  if (u.search || u.hash) throw new RefdeskError('invalid_request', `"url" must not have a query or fragment. ${FORMS}`);
  if (u.pathname.split('/').filter(Boolean).length < 2) throw new RefdeskError('invalid_request', `"url" must name a repository (https://host/owner/repo), not a host or an owner. ${FORMS}`);
  const ref = parseGitRepoUrl(text);
  return { url: text, id: ref.id, provider: ref.url.provider };
}

export const gitParseAddress: ParseAddressDeclaration = {
  title: 'Repository URL',
  description: 'The https address of a git repository, e.g. https://github.com/owner/repo or https://gitlab.com/group/project/-/tree/main/docs.',
  parse(raw, { allowHttpHosts }) {
    const address = parseRepositoryAddress(raw, allowHttpHosts);
    return { url: address.url, id: address.id, spec: { url: address.url, provider: address.provider } };
  },
};
