/**
 * Where an include target lives. Paths are relative to the documentation root (a repository, an
 * upload's folder or archive) with forward slashes; nothing outside the root is ever named.
 */
import { posix } from 'node:path';

/**
 * How a directive's path is looked up:
 * - `nearest` (FastAPI, mkdocs snippets, `!include`, rst, AsciiDoc): relative to the page's
 *   folder, then to each parent folder up to the root (FastAPI resolves from the mkdocs.yml
 *   folder, mkdocs snippets from the root); a leading `/` means the root itself;
 * - `site` (Hugo's `include` shortcode, VitePress `@/`): relative to the site's content root,
 *   with or without a leading `/`. The content root is not known (`content/`, `content/en/`...),
 *   so the page's folders are tried from the root down to the page's own folder, which is the
 *   fallback; a path without an extension also matches `<path>.md`, `<path>/index.md` and
 *   `<path>/_index.md`, as Hugo's page lookup does.
 */
export type IncludeScope = 'nearest' | 'site';

export type Resolved = { path: string } | { problem: string };

function leaves(p: string): boolean {
  return p === '..' || p.startsWith('../');
}

/** The folders of a page from the root ('') down to the page's own folder. */
function foldersDown(docPath: string): string[] {
  const dir = posix.dirname(docPath);
  if (dir === '.' || dir === '') return [''];
  const parts = dir.split('/');
  return ['', ...parts.map((_, i) => parts.slice(0, i + 1).join('/'))];
}

/**
 * Resolves `file` named by a directive of `docPath`. `exists` says whether a regular file of the
 * root has that path; `root` names the root in messages ('repository', 'upload').
 */
export function resolveIncludePath(docPath: string, file: string, exists: (p: string) => boolean, scope: IncludeScope = 'nearest', root = 'repository'): Resolved {
  const clean = file.trim().replace(/^["'`]|["'`]$/g, '');
  if (clean === '' || clean.includes('\0')) return { problem: 'an empty path' };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(clean)) return { problem: `"${clean}" is a URL, not a file of the ${root}` };
  const missing = { problem: `"${clean}" is not a file of the ${root}` };
  const outside = { problem: `"${clean}" leaves the ${root}` };

  if (scope === 'site') {
    const rel = clean.replace(/^@?\/+/, '');
    const variants = /\.[\w]+$/.test(rel) ? [rel] : [rel, `${rel}.md`, `${rel}/index.md`, `${rel}/_index.md`];
    let inside = false;
    for (const dir of foldersDown(docPath)) {
      for (const v of variants) {
        const p = posix.normalize(posix.join(dir === '' ? '.' : dir, v));
        if (leaves(p)) continue;
        if (exists(p)) return { path: p };
        inside = true;
      }
    }
    return inside ? missing : outside;
  }

  if (clean.startsWith('/')) {
    const p = posix.normalize(clean.replace(/^\/+/, ''));
    if (leaves(p)) return outside;
    return exists(p) ? { path: p } : missing;
  }
  let dir = posix.dirname(docPath);
  let inside = false;
  for (;;) {
    const p = posix.normalize(posix.join(dir === '.' ? '' : dir, clean));
    if (!leaves(p)) {
      if (exists(p)) return { path: p };
      inside = true;
    }
    if (dir === '.' || dir === '') break;
    dir = posix.dirname(dir);
  }
  return inside ? missing : outside;
}
