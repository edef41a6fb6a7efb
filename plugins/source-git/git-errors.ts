/**
 * Turns a failed git command into a RefdeskError a user can act on, and says whether trying
 * again may help (network trouble) or not (authentication, a missing repository or branch).
 * Messages name the repository by host and path only; git's stderr has already been redacted.
 */
import { RefdeskError } from '../../core/errors.ts';

export interface FailureContext {
  /** host/path of the repository. */
  display: string;
  /** What was being done, e.g. "clone". */
  what: string;
  hasToken: boolean;
}

export interface ClassifiedFailure {
  retryable: boolean;
  error: RefdeskError;
}

const AUTH = /Authentication failed|could not read (Username|Password)|terminal prompts disabled|returned error: 401|Permission denied \(publickey|Invalid username or password|HTTP Basic: Access denied/i;
const FORBIDDEN = /returned error: 403/i;
const NOT_FOUND = /returned error: 404|Repository not found|repository '[^']*' not found|does not appear to be a git repository|not found: did you run git update-server-info|No such file or directory|does not exist/i;
const REDIRECT = /returned error: 30[1278]|redirect/i;
const TRANSIENT = /returned error: (5\d\d|429|408)|Could not resolve host|Failed to connect|Connection (refused|reset|timed out)|Operation timed out|RPC failed|early EOF|remote end hung up unexpectedly|transfer closed|Empty reply from server|SSL|gnutls|TLS|unexpected disconnect|Recv failure|Send failure|Couldn't connect/i;

/** The last meaningful line of git's stderr, short, for a message. */
export function gitReason(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^(Cloning into|warning: filtering not recognized|hint:)/.test(l));
  const fatal = lines.filter((l) => /^(fatal|error):/.test(l));
  const line = (fatal[0] ?? lines[lines.length - 1] ?? 'no message').replace(/^(fatal|error):\s*/, '');
  return line.length > 300 ? line.slice(0, 300) + '...' : line;
}

export function classifyGitFailure(stderr: string, ctx: FailureContext): ClassifiedFailure {
  const reason = gitReason(stderr);
  if (AUTH.test(stderr)) {
    const msg = ctx.hasToken
      ? `The git server refused the token for ${ctx.display} (${ctx.what}): check that the token is valid and can read this repository, then update the library's token.`
      : `The repository ${ctx.display} needs credentials (${ctx.what}): it is private, or does not exist. Give a token with read access in the "token" field.`;
    return { retryable: false, error: new RefdeskError('unauthorized', msg) };
  }
  if (FORBIDDEN.test(stderr)) {
    return { retryable: false, error: new RefdeskError('forbidden', `The git server forbids access to ${ctx.display} (${ctx.what}, HTTP 403): the token lacks read access to this repository.`) };
  }
  if (REDIRECT.test(stderr) && !TRANSIENT.test(stderr)) {
    return { retryable: false, error: new RefdeskError('invalid_source', `The git server redirected the request for ${ctx.display} (${ctx.what}); redirects are not followed. Use the repository's current URL.`) };
  }
  if (TRANSIENT.test(stderr)) {
    return { retryable: true, error: new RefdeskError('invalid_source', `Could not reach the git server for ${ctx.display} (${ctx.what}): ${reason}.`) };
  }
  if (NOT_FOUND.test(stderr)) {
    const hint = ctx.hasToken ? 'check the URL' : 'check the URL; a private repository needs a token';
    return { retryable: false, error: new RefdeskError('invalid_source', `No git repository at ${ctx.display} (${ctx.what}): ${hint}.`) };
  }
  return { retryable: false, error: new RefdeskError('invalid_source', `git ${ctx.what} failed for ${ctx.display}: ${reason}.`) };
}
