/**
 * Tokens for private git repositories that come from the operator's settings (not from a
 * library's own spec): the kernel provides one `GitCredentials` (token `Tokens.GitCredentials`)
 * reading setting `git` at each use, so a change applies to the next clone without a restart.
 */
export interface GitCredentials {
  /**
   * The token configured for a repository's host over http(s), and the kind of host it was
   * given as (`github` or `gitlab`: it chooses the HTTP Basic user name); undefined when the
   * settings name no token for that host. Never throws for an unknown host.
   */
  tokenFor(url: { transport: string; host: string; port: string }): Promise<{ token: string; provider: 'github' | 'gitlab' } | undefined>;

  /** The kind of a self-managed host named in the settings (`git.hosts`), whether or not it has a token. */
  providerFor?(url: { host: string; port: string }): Promise<'github' | 'gitlab' | undefined>;
}
