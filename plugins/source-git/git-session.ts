/**
 * Everything one read needs before it touches the network: the parsed URL, the network-policy
 * check (with the checked addresses pinned for git's HTTP client), the token as git config, a
 * git runner, a temporary clone directory that is always removed, and retries with backoff.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogLevel } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { assertUrlAllowed, type NetworkPolicy } from '../../core/net/address-policy.ts';
import type { GitCredentials } from '../../core/git-credentials.ts';
import { tokenAuth } from './git-auth.ts';
import { GitRepo } from './git-repo.ts';
import { GitRunner } from './git-run.ts';
import { gitRepositoryUrl, type GitUrl } from './git-url.ts';
import { withRetry } from './retry.ts';
import type { GitSourceOptions } from './schema.ts';

export interface GitSpec {
  url: string;
  provider?: string;
  branch?: string;
  /** Only this folder of the repository is read ('' or absent: the whole repository). */
  folder?: string;
  token?: string;
}

export interface GitSession {
  url: GitUrl;
  repo: GitRepo;
  /** The token in use: the spec's, else the one the operator's settings give for this host. */
  token?: string;
  /** Where `token` came from. */
  tokenFrom?: 'spec' | 'settings';
  /** Runs a network step with retries and backoff, logging each retry. */
  retry<T>(step: () => Promise<T>): Promise<T>;
  /** Removes the temporary clone. */
  close(): Promise<void>;
}

export function parseSpec(spec: Record<string, unknown>): GitSpec {
  const str = (k: string): string | undefined => {
    const v = spec[k];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') throw new RefdeskError('invalid_request', `The git source's "${k}" must be a string.`);
    return v;
  };
  const url = str('url');
  if (!url) throw new RefdeskError('invalid_request', 'The git source needs "url": the repository URL.');
  return { url, provider: str('provider'), branch: str('branch'), folder: str('folder'), token: str('token') };
}

async function checkNetwork(url: GitUrl, options: GitSourceOptions, policy: NetworkPolicy): Promise<Array<[string, string]>> {
  if (url.transport === 'file') {
    if (!options.allowFileUrls) {
      throw new RefdeskError('forbidden', 'file:// repository URLs are turned off on this server (they read its own disk); an operator can allow them with the git source option allowFileUrls.');
    }
    return [];
  }
  const host = url.host.includes(':') && !url.host.startsWith('[') ? `[${url.host}]` : url.host;
  const port = url.port || (url.transport === 'https' ? '443' : url.transport === 'http' ? '80' : '22');
  if (url.transport === 'ssh') {
    await assertUrlAllowed(`ssh://${host}:${port}/`, policy, { schemes: ['ssh:'] });
    return [];
  }
  const addrs = await assertUrlAllowed(`${url.transport}://${host}:${port}/`, policy);
  // Pin git's HTTP client to the addresses just checked (no second, different DNS answer).
  const list = addrs.map((a) => (a.family === 6 ? `[${a.address}]` : a.address)).join(',');
  const bare = url.host.replace(/^\[|\]$/g, '');
  return [['http.curloptResolve', `${bare}:${port}:${list}`]];
}

/** Prepares a read of `spec`. The caller must `close()` the session. */
export async function openSession(
  spec: GitSpec,
  options: GitSourceOptions,
  policy: NetworkPolicy,
  signal: AbortSignal,
  log: (level: LogLevel, message: string) => void,
  credentials?: GitCredentials,
): Promise<GitSession> {
  let url = gitRepositoryUrl(spec.url, spec.provider);
  signal.throwIfAborted();
  const pins = await checkNetwork(url, options, policy);
  signal.throwIfAborted();
  // A library's own token wins; otherwise the settings' token for this very host, if any.
  let token = spec.token;
  let tokenFrom: GitSession['tokenFrom'] = token ? 'spec' : undefined;
  if (!token && credentials) {
    const found = await credentials.tokenFor(url);
    if (found) {
      token = found.token;
      tokenFrom = 'settings';
      // The host is named in the settings as a GitHub or GitLab host: read it as one.
      if (!spec.provider) url = { ...url, provider: found.provider };
      log('debug', `using the git token from the settings for ${url.host}${url.port ? ':' + url.port : ''}`);
    }
  }
  const auth = tokenAuth(url, token);
  if (token && auth.config.length === 0) log('warn', `a token is only used over https; ${url.transport} URLs authenticate otherwise`);
  const protocols = ['https', 'http', 'ssh', ...(options.allowFileUrls ? ['file'] : [])];
  const runner = new GitRunner({ timeoutMs: options.timeoutMs, signal, config: [...auth.config, ...pins], protocols, secrets: auth.secrets });
  const dir = await mkdtemp(join(tmpdir(), 'refdesk-git-'));
  const repo = new GitRepo(runner, url, Boolean(token), join(dir, 'repo'));
  return {
    url,
    repo,
    token,
    tokenFrom,
    retry: (step) =>
      withRetry(step, {
        attempts: options.attempts,
        baseDelayMs: options.retryDelayMs,
        signal,
        onRetry: (attempt, delay, error) => log('warn', `${runner.redact(error.message)} Retrying in ${delay} ms (attempt ${attempt} of ${options.attempts}).`),
      }),
    close: () => rm(dir, { recursive: true, force: true }),
  };
}
