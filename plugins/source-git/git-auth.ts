/**
 * The token of a private repository, as git config entries for the child process environment.
 * It becomes an `Authorization: Basic` header scoped to the repository's origin, so it is never
 * written into a URL, argv, a file, or a log line.
 */
import type { GitProvider, GitUrl } from './git-url.ts';

/** User names the providers expect beside an access token in HTTP Basic auth. */
const TOKEN_USER: Record<GitProvider, string> = {
  github: 'x-access-token',
  gitlab: 'oauth2',
  bitbucket: 'x-token-auth',
  git: 'git',
};

export interface GitAuth {
  /** git config entries (key, value) carrying the credentials. */
  config: Array<[string, string]>;
  /** Every form of the secret that must be redacted from any text. */
  secrets: string[];
}

/**
 * Config for a token over http(s). A token written `user:secret` is used as given (e.g. a
 * Bitbucket app password with its user name); otherwise the provider's token user name is used.
 * Over ssh and file URLs a token is not used (ssh authenticates with the server's keys).
 */
export function tokenAuth(url: GitUrl, token: string | undefined): GitAuth {
  if (!token || (url.transport !== 'https' && url.transport !== 'http')) return { config: [], secrets: token ? [token] : [] };
  const pair = token.includes(':') ? token : `${TOKEN_USER[url.provider]}:${token}`;
  const basic = Buffer.from(pair, 'utf8').toString('base64');
  const origin = `${url.transport}://${url.host}${url.port ? ':' + url.port : ''}/`;
  return {
    config: [[`http.${origin}.extraHeader`, `Authorization: Basic ${basic}`]],
    secrets: [token, pair, basic, ...token.split(':').filter((s) => s.length >= 8)],
  };
}
