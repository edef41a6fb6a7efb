/**
 * The repository's own choice of what to index: `refdesk.json`, else `context7.json`, in the
 * repository root. Fields (all optional): `folders` (only index these folders), `excludeFolders`,
 * `excludeFiles` (file names), `rules` (usage rules for readers of the docs) and
 * `previousVersions` (`[{ "tag": "v1.2.0" }]`, the tags worth indexing as versions).
 */
import { RefdeskError } from '../../core/errors.ts';

export const CONFIG_FILES = ['refdesk.json', 'context7.json'] as const;

export interface RepoConfig {
  /** Which file it came from, or null for the defaults. */
  file: string | null;
  folders: string[];
  excludeFolders: string[];
  excludeFiles: string[];
  rules: string[];
  previousVersions: string[];
}

export const NO_CONFIG: RepoConfig = Object.freeze({ file: null, folders: [], excludeFolders: [], excludeFiles: [], rules: [], previousVersions: [] }) as RepoConfig;

function strings(v: unknown, file: string, key: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
    throw new RefdeskError('invalid_source', `${file} in the repository: "${key}" must be an array of strings.`);
  }
  return (v as string[]).map((s) => s.trim()).filter((s) => s !== '');
}

/** Folder entries as repository-relative paths without leading './' or '/' or trailing '/'. */
function folders(v: unknown, file: string, key: string): string[] {
  return strings(v, file, key).map((f) => {
    const p = f.replace(/^(\.\/|\/)+/, '').replace(/\/+$/, '');
    if (p.split('/').includes('..')) throw new RefdeskError('invalid_source', `${file} in the repository: "${key}" entry "${f.slice(0, 60)}" leaves the repository.`);
    return p;
  }).filter((p) => p !== '' && p !== '.');
}

/** Parses a config file's text. Throws `invalid_source` naming the file for bad JSON or fields. */
export function parseRepoConfig(file: string, text: string): RepoConfig {
  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    throw new RefdeskError('invalid_source', `${file} in the repository is not valid JSON; fix it or remove it to use the default selection.`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new RefdeskError('invalid_source', `${file} in the repository must hold a JSON object.`);
  }
  const d = data as Record<string, unknown>;
  const prev = d.previousVersions;
  let previousVersions: string[] = [];
  if (prev !== undefined && prev !== null) {
    if (!Array.isArray(prev)) throw new RefdeskError('invalid_source', `${file} in the repository: "previousVersions" must be an array of {"tag": "..."}.`);
    previousVersions = prev
      .map((p) => (typeof p === 'string' ? p : p && typeof p === 'object' ? (p as { tag?: unknown }).tag : undefined))
      .filter((t): t is string => typeof t === 'string' && t.trim() !== '')
      .map((t) => t.trim());
  }
  return {
    file,
    folders: folders(d.folders, file, 'folders'),
    excludeFolders: folders(d.excludeFolders, file, 'excludeFolders'),
    excludeFiles: strings(d.excludeFiles, file, 'excludeFiles'),
    rules: strings(d.rules, file, 'rules'),
    previousVersions,
  };
}
