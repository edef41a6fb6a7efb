/**
 * One repository as git commands: list its refs, make a shallow, blob-less clone of one ref,
 * list its tree, fetch the blobs needed in one batch, and read them from the object store.
 * Files are never checked out (no symlink in the repository can make us read the server's disk).
 */
import { rm } from 'node:fs/promises';
import { classifyGitFailure } from './git-errors.ts';
import type { GitRunner } from './git-run.ts';
import type { GitUrl } from './git-url.ts';
import { RetryableError } from './retry.ts';
import { RefdeskError } from '../../core/errors.ts';

export interface RemoteRefs {
  /** The default branch name, '' when the server did not say. */
  defaultBranch: string;
  heads: Map<string, string>;
  /** Tag name -> commit id (peeled). */
  tags: Map<string, string>;
}

export interface TreeEntry {
  path: string;
  mode: string;
  oid: string;
}

export class GitRepo {
  constructor(
    private readonly git: GitRunner,
    private readonly url: GitUrl,
    private readonly hasToken: boolean,
    /** The clone's directory. */
    readonly dir: string,
  ) {}

  private async network(args: string[], what: string, input?: string, cwd?: string): Promise<Buffer> {
    const r = await this.git.run(args, { what, input, cwd });
    if (r.code === 0) return r.stdout;
    const f = classifyGitFailure(r.stderr, { display: this.url.display, what, hasToken: this.hasToken });
    throw f.retryable ? new RetryableError(f.error) : f.error;
  }

  private async local(args: string[], what: string, input?: string, maxStdout?: number): Promise<Buffer> {
    const r = await this.git.run(args, { what, input, cwd: this.dir, maxStdout });
    if (r.code !== 0) throw new RefdeskError('invalid_source', `git ${what} failed for ${this.url.display}: ${r.stderr.trim().split('\n').pop() ?? ''}`);
    return r.stdout;
  }

  /** Branches and tags of the remote (one request). */
  async listRefs(): Promise<RemoteRefs> {
    const out = (await this.network(['ls-remote', '--symref', '--', this.url.cloneUrl, 'HEAD', 'refs/heads/*', 'refs/tags/*'], 'ls-remote')).toString('utf8');
    const refs: RemoteRefs = { defaultBranch: '', heads: new Map(), tags: new Map() };
    for (const line of out.split('\n')) {
      const sym = /^ref: refs\/heads\/(\S+)\tHEAD$/.exec(line);
      if (sym) {
        refs.defaultBranch = sym[1];
        continue;
      }
      const m = /^([0-9a-f]{40,64})\t(\S+)$/.exec(line);
      if (!m) continue;
      const [, oid, name] = m;
      if (name.startsWith('refs/heads/')) refs.heads.set(name.slice(11), oid);
      else if (name.startsWith('refs/tags/')) {
        const tag = name.slice(10);
        if (tag.endsWith('^{}')) refs.tags.set(tag.slice(0, -3), oid);
        else if (!refs.tags.has(tag)) refs.tags.set(tag, oid);
      }
    }
    return refs;
  }

  /** A depth-1 clone of `ref` (a branch or tag name) without blobs and without a checkout. */
  async clone(ref: string): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
    const args = ['clone', '--quiet', '--depth=1', '--filter=blob:none', '--no-checkout', '--single-branch', '--no-tags'];
    if (ref) args.push(`--branch=${ref}`);
    args.push('--', this.url.cloneUrl, this.dir);
    await this.network(args, 'clone');
  }

  /** The commit id checked out. */
  async head(): Promise<string> {
    return (await this.local(['rev-parse', 'HEAD'], 'rev-parse')).toString('utf8').trim();
  }

  /** The committer date of the commit checked out (ISO 8601), or '' when git does not tell. */
  async commitDate(): Promise<string> {
    return (await this.local(['log', '-1', '--format=%cI', 'HEAD'], 'log')).toString('utf8').trim();
  }

  /** Every regular file of the commit (symlinks and submodules left out), sorted by path. */
  async tree(): Promise<TreeEntry[]> {
    const out = (await this.local(['ls-tree', '-r', '-z', '--full-tree', 'HEAD'], 'ls-tree')).toString('utf8');
    const entries: TreeEntry[] = [];
    for (const rec of out.split('\0')) {
      const m = /^(\d{6}) (\w+) ([0-9a-f]{40,64})\t(.+)$/s.exec(rec);
      if (!m || m[2] !== 'blob' || (m[1] !== '100644' && m[1] !== '100755')) continue;
      entries.push({ mode: m[1], oid: m[3], path: m[4] });
    }
    return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** Fetches, in one request, the blobs of `oids` that the clone does not hold yet. */
  async fetchBlobs(oids: string[]): Promise<number> {
    if (oids.length === 0) return 0;
    const present = new Set(
      (await this.local(['cat-file', '--batch-check=%(objectname)', '--batch-all-objects'], 'cat-file')).toString('utf8').split('\n'),
    );
    const missing = [...new Set(oids)].filter((o) => !present.has(o));
    if (missing.length === 0) return 0;
    await this.network(
      ['-c', 'fetch.negotiationAlgorithm=noop', 'fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--recurse-submodules=no', '--filter=blob:none', '--stdin', 'origin'],
      'fetch',
      missing.join('\n') + '\n',
      this.dir,
    );
    return missing.length;
  }

  /** Blob contents by id (they must have been fetched). */
  async readBlobs(oids: string[], maxBytes: number): Promise<Map<string, Buffer>> {
    const unique = [...new Set(oids)];
    const out = new Map<string, Buffer>();
    if (unique.length === 0) return out;
    const data = await this.local(['cat-file', '--batch'], 'cat-file', unique.join('\n') + '\n', maxBytes + unique.length * 100 + 1024);
    let pos = 0;
    while (pos < data.length) {
      const nl = data.indexOf(10, pos);
      if (nl < 0) break;
      const header = data.toString('utf8', pos, nl);
      const m = /^([0-9a-f]{40,64}) (\w+) (\d+)$/.exec(header);
      if (!m) {
        pos = nl + 1;
        continue;
      }
      const size = Number(m[3]);
      out.set(m[1], data.subarray(nl + 1, nl + 1 + size));
      pos = nl + 1 + size + 1;
    }
    return out;
  }
}
