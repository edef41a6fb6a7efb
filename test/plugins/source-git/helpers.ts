import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_NETWORK_POLICY, type NetworkPolicy } from '../../../core/net/address-policy.ts';
import { GitSource } from '../../../plugins/source-git/git-source.ts';
import type { GitSourceOptions } from '../../../plugins/source-git/schema.ts';
import { startGitServer, type GitServer } from './git-http-server.ts';
import { RepoBuilder } from './repo-builder.ts';

/** The policy tests pass: loopback allowed, as an operator would allow an internal host. */
export const LOOPBACK_POLICY: NetworkPolicy = { ...DEFAULT_NETWORK_POLICY, allowHosts: ['127.0.0.1'] };

export interface GitFixture {
  root: string;
  server: GitServer;
  repo(name: string, branch?: string): RepoBuilder;
  /** `http://127.0.0.1:<port>/<name>.git` */
  url(name: string): string;
  source(options?: Partial<GitSourceOptions>, policy?: NetworkPolicy): GitSource;
  close(): Promise<void>;
}

/** A temp dir with a git smart-HTTP server over `<root>/served`; private repos by token. */
export async function gitFixture(tokens: Record<string, string> = {}): Promise<GitFixture> {
  const root = await mkdtemp(join(tmpdir(), 'refdesk-git-test-'));
  const server = await startGitServer(join(root, 'served'), tokens);
  return {
    root,
    server,
    repo: (name, branch) => new RepoBuilder(root, name, branch),
    url: (name) => `${server.base}/${name}.git`,
    source: (options = {}, policy = LOOPBACK_POLICY) => new GitSource({ retryDelayMs: 5, ...options }, { policy }),
    async close() {
      await server.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export { rejectsWith } from '../../helpers/rejects-with.ts';

/** A `git` first on PATH that records every argv in `record`, then runs the real git; `restore()` undoes it. */
export function gitWrapper(): { record: string; restore(): void } {
  const bin = mkdtempSync(join(tmpdir(), 'refdesk-git-argv-'));
  const record = join(bin, 'argv.log');
  const real = (process.env.PATH ?? '').split(':').map((d) => join(d, 'git')).find((p) => {
    try {
      return readFileSync(p).length > 0;
    } catch {
      return false;
    }
  })!;
  writeFileSync(join(bin, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${record}'\nexec '${real}' "$@"\n`);
  chmodSync(join(bin, 'git'), 0o755);
  const oldPath = process.env.PATH;
  process.env.PATH = `${bin}:${oldPath}`;
  return {
    record,
    restore() {
      process.env.PATH = oldPath;
      rmSync(bin, { recursive: true, force: true });
    },
  };
}
