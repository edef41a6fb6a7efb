/**
 * Builds real git repositories for tests: a work tree where files are written and committed,
 * then published as a bare repository under a served root (`<root>/<name>.git`).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const ENV: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export class RepoBuilder {
  readonly work: string;

  constructor(
    readonly root: string,
    readonly name: string,
    branch = 'main',
  ) {
    this.work = join(root, 'work', name);
    mkdirSync(this.work, { recursive: true });
    git(this.work, 'init', '-q', '-b', branch);
  }

  /** Writes files (relative paths; null deletes) and commits them. */
  commit(files: Record<string, string | Buffer | null>, message = 'update'): this {
    for (const [rel, data] of Object.entries(files)) {
      const p = join(this.work, ...rel.split('/'));
      if (data === null) rmSync(p, { force: true });
      else {
        mkdirSync(dirname(p), { recursive: true });
        writeFileSync(p, data);
      }
    }
    git(this.work, 'add', '-A');
    git(this.work, 'commit', '-q', '--allow-empty', '-m', message);
    return this;
  }

  /** Commits a symbolic link `rel` pointing at `target` (e.g. a file outside the repository). */
  symlink(rel: string, target: string): this {
    const p = join(this.work, ...rel.split('/'));
    mkdirSync(dirname(p), { recursive: true });
    symlinkSync(target, p);
    git(this.work, 'add', '-A');
    git(this.work, 'commit', '-q', '-m', `link ${rel}`);
    return this;
  }

  tag(name: string): this {
    git(this.work, 'tag', '-a', name, '-m', name);
    return this;
  }

  checkout(branch: string, create = false): this {
    git(this.work, 'checkout', '-q', ...(create ? ['-b'] : []), branch);
    return this;
  }

  /** Publishes (or updates) `<root>/served/<name>.git`, allowing partial clones. Returns its path. */
  publish(): string {
    const bare = join(this.root, 'served', `${this.name}.git`);
    rmSync(bare, { recursive: true, force: true });
    mkdirSync(dirname(bare), { recursive: true });
    git(this.root, 'clone', '-q', '--bare', this.work, bare);
    git(bare, 'config', 'uploadpack.allowFilter', 'true');
    git(bare, 'config', 'uploadpack.allowAnySHA1InWant', 'true');
    git(bare, 'config', 'http.receivepack', 'false');
    return bare;
  }
}
