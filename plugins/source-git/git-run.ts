/**
 * Runs the system `git` with an environment Refdesk controls: no system or user config, no
 * credential helpers, no prompts, only the allowed transports, and the token (when there is one)
 * as an HTTP header passed through GIT_CONFIG_* environment variables, so it never appears in
 * argv (visible to other processes), in a URL, or in what this module returns.
 */
import { spawn } from 'node:child_process';
import { homedir } from 'node:os';
import { RefdeskError } from '../../core/errors.ts';
import { createRedactor, type Redactor } from '../../core/redact.ts';

export interface GitCall {
  /** Working directory (a clone), or undefined for commands that need none. */
  cwd?: string;
  /** Written to git's stdin, then closed. */
  input?: string;
  /** Stops reading stdout past this many bytes and fails (default 64 MiB). */
  maxStdout?: number;
  /** A short name of the step for messages, e.g. "clone". */
  what: string;
}

export interface GitResult {
  code: number;
  stdout: Buffer;
  /** git's stderr with every secret removed. */
  stderr: string;
}

export interface GitRunnerOptions {
  timeoutMs: number;
  signal: AbortSignal;
  /** Extra `-c` style settings (key, value), passed through the environment. */
  config: Array<[string, string]>;
  /** Transports git may use: GIT_ALLOW_PROTOCOL. */
  protocols: string[];
  /** Strings that must never leave this module (the token and its encodings). */
  secrets: string[];
}

/**
 * Removes every secret (and its encodings) from a text, and the generic credential shapes
 * (Authorization headers, Bearer/Basic values, token= parameters, URL userinfo): core/redact.ts.
 */
export function redact(text: string, secrets: readonly string[]): string {
  return createRedactor(secrets)(text);
}

export class GitRunner {
  private readonly env: NodeJS.ProcessEnv;
  private readonly redactor: Redactor;

  constructor(private readonly options: GitRunnerOptions) {
    this.redactor = createRedactor(options.secrets);
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: homedir(),
      LANG: 'C',
      LC_ALL: 'C',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: process.platform === 'win32' ? 'NUL' : '/dev/null',
      GIT_ALLOW_PROTOCOL: options.protocols.join(':'),
      GIT_PROTOCOL_FROM_USER: '0',
      GIT_SSH_COMMAND: 'ssh -o BatchMode=yes',
      GIT_LFS_SKIP_SMUDGE: '1',
    };
    if (process.env.SSH_AUTH_SOCK) env.SSH_AUTH_SOCK = process.env.SSH_AUTH_SOCK;
    const config: Array<[string, string]> = [
      ['credential.helper', ''],
      ['core.askPass', ''],
      ['http.followRedirects', 'false'],
      ['protocol.version', '2'],
      ['advice.detachedHead', 'false'],
      ...options.config,
    ];
    env.GIT_CONFIG_COUNT = String(config.length);
    config.forEach(([k, v], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = k;
      env[`GIT_CONFIG_VALUE_${i}`] = v;
    });
    this.env = env;
  }

  /** Removes the secrets this runner knows from a text. */
  redact(text: string): string {
    return this.redactor(text);
  }

  /**
   * Runs `git <args>`. Resolves with the exit code and output (non-zero codes are not errors
   * here); rejects with the signal's reason when aborted, and with `invalid_source` on timeout.
   */
  run(args: string[], call: GitCall): Promise<GitResult> {
    const { signal, timeoutMs } = this.options;
    signal.throwIfAborted();
    const maxStdout = call.maxStdout ?? 64 * 1024 * 1024;
    return new Promise<GitResult>((resolve, reject) => {
      const child = spawn('git', args, { cwd: call.cwd, env: this.env, stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      let outBytes = 0;
      let err = '';
      let ended: 'timeout' | 'abort' | 'overflow' | null = null;
      const kill = (why: 'timeout' | 'abort' | 'overflow') => {
        if (ended) return;
        ended = why;
        child.kill('SIGKILL');
      };
      const timer = setTimeout(() => kill('timeout'), timeoutMs);
      const onAbort = () => kill('abort');
      signal.addEventListener('abort', onAbort, { once: true });
      child.stdout.on('data', (b: Buffer) => {
        outBytes += b.length;
        if (outBytes > maxStdout) kill('overflow');
        else out.push(b);
      });
      child.stderr.on('data', (b: Buffer) => {
        if (err.length < 64 * 1024) err += b.toString('utf8');
      });
      child.stdin.on('error', () => {});
      child.stdin.end(call.input ?? '');
      const finish = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      };
      child.on('error', (e: NodeJS.ErrnoException) => {
        finish();
        if (e.code === 'ENOENT') reject(new RefdeskError('config_error', 'The git command is not installed on this server (git 2.36 or newer is needed for git sources).'));
        else reject(new RefdeskError('internal_error', `git ${call.what} could not start (${e.code ?? 'error'}).`));
      });
      child.on('close', (code) => {
        finish();
        if (ended === 'abort') return reject(signal.reason ?? new DOMException('This operation was aborted', 'AbortError'));
        if (ended === 'timeout') {
          return reject(new RefdeskError('invalid_source', `git ${call.what} did not finish within ${Math.round(timeoutMs / 1000)} s; the repository may be too large or the network too slow (an operator can raise the git source's timeoutMs).`));
        }
        if (ended === 'overflow') return reject(new RefdeskError('too_large', `git ${call.what} produced more than ${maxStdout} bytes; the repository is too large for this server's limits.`));
        resolve({ code: code ?? -1, stdout: Buffer.concat(out), stderr: this.redact(err) });
      });
    });
  }
}
