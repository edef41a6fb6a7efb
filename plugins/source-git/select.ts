/**
 * Which files of a repository are its documentation.
 *
 * Without a config file: Markdown, MDX, reStructuredText and AsciiDoc files anywhere (plain text
 * and notebooks only inside documentation folders), leaving out tests, fixtures, vendored and
 * generated code, dependency folders, hidden folders, translations (when an `en` folder sits
 * beside other locales), repository boilerplate (licenses, codes of conduct, templates) and the
 * changelogs of sub-packages (the root changelog stays).
 *
 * With `folders` in refdesk.json / context7.json only those folders are read (and the default
 * exclusions apply inside them); `excludeFolders` entries are paths from the root (`docs/old`),
 * folder names matched at any depth (`legacy`), or globs (`docs/**\/drafts`); `excludeFiles`
 * entries are file names or globs on file names.
 */
import type { RepoConfig } from './repo-config.ts';

export type SourceFormat = 'markdown' | 'mdx' | 'text' | 'rst' | 'asciidoc' | 'notebook';

const EXTENSIONS: Record<string, SourceFormat> = {
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.mdown': 'markdown',
  '.mkd': 'markdown',
  '.mdx': 'mdx',
  '.rst': 'rst',
  '.adoc': 'asciidoc',
  '.asciidoc': 'asciidoc',
  '.txt': 'text',
  '.ipynb': 'notebook',
};

/** Folders holding documentation (plain text and notebooks are read only inside them). */
const DOC_DIRS = new Set(['docs', 'doc', 'documentation', 'guide', 'guides', 'manual', 'tutorial', 'tutorials', 'examples', 'example', 'cookbook', 'website', 'site', 'content', 'pages', 'wiki', 'handbook']);

/** Folder names never read (at any depth). */
const EXCLUDED_DIRS = new Set([
  'node_modules', 'bower_components', 'jspm_packages', 'vendor', 'vendors', 'third_party', 'third-party', 'thirdparty', 'external', 'extern',
  'test', 'tests', '__tests__', 'testing', 'testdata', 'test-data', 'test_data', 'fixtures', '__fixtures__', 'e2e', 'spec', 'specs', '__snapshots__', '__mocks__', 'benchmarks',
  'dist', 'build', 'out', 'target', 'coverage', 'site-packages', 'venv', 'env', '__pycache__', 'i18n', 'locales', '_build', '_site', 'public',
]);

const BOILERPLATE = /^(license|licence|copying|notice|code_of_conduct|code-of-conduct|security|pull_request_template|issue_template|funding|authors|contributors|codeowners|maintainers)(\.[\w.-]+)?$/i;
const CHANGELOG = /^(changelog|changes|history|releases?|release[-_]notes|news)(\.[\w.-]+)?$/i;
const LOCALE = /^[a-z]{2}([-_][a-z]{2,4})?$/i;

/** The format of a file name, or null when it is not a documentation format. */
export function formatOfPath(path: string): SourceFormat | null {
  const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  const dot = name.lastIndexOf('.');
  return dot > 0 ? (EXTENSIONS[name.slice(dot)] ?? null) : null;
}

/** A minimal glob: `**` any number of segments, `*` and `?` within one segment. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      re += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

const isGlob = (s: string) => /[*?]/.test(s);

/** Locale folders to skip: siblings of an `en` folder that look like locale codes. */
function translationDirs(paths: readonly string[]): Set<string> {
  const children = new Map<string, Set<string>>();
  for (const p of paths) {
    const segs = p.split('/');
    for (let i = 0; i < segs.length - 1; i++) {
      const parent = segs.slice(0, i).join('/');
      let set = children.get(parent);
      if (!set) children.set(parent, (set = new Set()));
      set.add(segs[i]);
    }
  }
  const out = new Set<string>();
  for (const [parent, kids] of children) {
    if (!kids.has('en')) continue;
    const locales = [...kids].filter((k) => k !== 'en' && LOCALE.test(k));
    if (locales.length < 1) continue;
    for (const l of locales) out.add(parent ? `${parent}/${l}` : l);
  }
  return out;
}

export interface Selection {
  /** Selected paths with their formats, in path order. */
  files: Array<{ path: string; format: SourceFormat }>;
  /** How many documentation-format files were left out, by reason. */
  skipped: Record<string, number>;
}

/** Chooses the documentation files among the repository's paths (sorted). */
export function selectDocs(paths: readonly string[], config: RepoConfig): Selection {
  const skipped: Record<string, number> = {};
  const skip = (why: string) => {
    skipped[why] = (skipped[why] ?? 0) + 1;
  };
  const translations = translationDirs(paths);
  const excludeFolderRules = config.excludeFolders.map((e) => ({
    glob: isGlob(e) ? globToRegExp(e) : null,
    prefix: !isGlob(e) && e.includes('/') ? e + '/' : null,
    name: !isGlob(e) && !e.includes('/') ? e : null,
  }));
  const excludeFileRules = config.excludeFiles.map((e) => (isGlob(e) ? globToRegExp(e) : e));
  const files: Selection['files'] = [];

  for (const path of paths) {
    const format = formatOfPath(path);
    if (!format) continue;
    if (config.file && path === config.file) continue;
    const segs = path.split('/');
    const name = segs[segs.length - 1];
    const dirs = segs.slice(0, -1);

    // Which part of the path the default folder exclusions look at.
    let inner = dirs;
    if (config.folders.length > 0) {
      const base = config.folders.find((f) => path === f || path.startsWith(f + '/'));
      if (base === undefined) {
        skip('outside the configured folders');
        continue;
      }
      inner = path === base ? [] : base === '' ? dirs : path.slice(base.length + 1).split('/').slice(0, -1);
    }
    if (inner.some((d) => d.startsWith('.') || EXCLUDED_DIRS.has(d.toLowerCase()))) {
      skip('tests, vendored, generated or hidden folders');
      continue;
    }
    if (dirs.some((_, i) => translations.has(dirs.slice(0, i + 1).join('/')))) {
      skip('translations');
      continue;
    }
    const dirPath = dirs.join('/');
    if (
      excludeFolderRules.some(
        (r) =>
          (r.name !== null && dirs.includes(r.name)) ||
          (r.prefix !== null && (dirPath + '/').startsWith(r.prefix)) ||
          (r.glob !== null && dirs.some((_, i) => r.glob!.test(dirs.slice(0, i + 1).join('/')))),
      )
    ) {
      skip(`excluded by ${config.file}`);
      continue;
    }
    if (excludeFileRules.some((r) => (typeof r === 'string' ? r === name : r.test(name)))) {
      skip(`excluded by ${config.file}`);
      continue;
    }
    if (name.startsWith('.') || BOILERPLATE.test(name) || /template/i.test(dirPath.split('/').pop() ?? '')) {
      skip('licenses, templates and other boilerplate');
      continue;
    }
    if (CHANGELOG.test(name) && dirs.length > 0) {
      skip('changelogs of sub-packages');
      continue;
    }
    if (CHANGELOG.test(name) && dirs.length === 0 && format === 'text') continue;
    if ((format === 'text' || format === 'notebook') && config.folders.length === 0 && !dirs.some((d) => DOC_DIRS.has(d.toLowerCase()))) {
      skip('text files and notebooks outside documentation folders');
      continue;
    }
    files.push({ path, format });
  }
  return { files, skipped };
}
