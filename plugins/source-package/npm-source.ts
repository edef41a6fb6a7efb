import { posix } from 'node:path';
import semver from 'semver';
import type { SourceContext, SourceDocument } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { readTarGz, type ArchiveFile } from './archive.ts';
import { dtsToMarkdown, relativeImports } from './dts-api.ts';
import { checkNpmName, npmPackageUrl, registryBase } from './names.ts';
import { docOrder, fileDocument, isDeclaration, isNpmDoc, isReadme, sha256 } from './package-docs.ts';
import { download, getJson, npmDigest } from './registry-http.ts';
import { DEFAULT_PACKAGE_OPTIONS } from './schema.ts';
import { allUnchanged, RegistrySource } from './shared.ts';

/** The parts of an npm registry package document (packument) we read. */
export interface NpmPackument {
  name?: string;
  'dist-tags'?: Record<string, string>;
  versions?: Record<string, { dist?: { tarball?: string; integrity?: string; shasum?: string }; types?: string; typings?: string; readme?: string }>;
  readme?: string;
  time?: Record<string, string>;
}

/** Most declaration files followed from the entry points. */
const MAX_DECLARATION_FILES = 200;

/**
 * Published versions, newest first (by semver; versions that do not parse go last). The lead
 * can show them as the library's available versions; pinning one indexes that version.
 */
export function npmVersions(doc: NpmPackument): string[] {
  const all = Object.keys(doc.versions ?? {});
  const valid = all.filter((v) => semver.valid(v)).sort(semver.rcompare);
  return [...valid, ...all.filter((v) => !semver.valid(v))];
}

/** The version to index: the pinned one (a version or a dist-tag), else dist-tags.latest. */
export function resolveNpmVersion(doc: NpmPackument, name: string, pinned: string): string {
  const versions = doc.versions ?? {};
  const tags = doc['dist-tags'] ?? {};
  if (!pinned) {
    const latest = tags.latest ?? npmVersions(doc)[0];
    if (!latest || !versions[latest]) throw new RefdeskError('no_documentation', `The npm package "${name}" has no published version.`);
    return latest;
  }
  for (const v of [pinned, pinned.replace(/^v(?=\d)/, '')]) {
    if (versions[v]) return v;
    if (tags[v] && versions[tags[v]]) return tags[v];
  }
  const recent = npmVersions(doc).slice(0, 5).join(', ');
  throw new RefdeskError('version_not_found', `The npm package "${name}" has no version "${pinned.slice(0, 50)}" (latest: ${tags.latest ?? 'none'}; recent: ${recent || 'none'}).`);
}

/** Declaration entry points package.json names (types, typings, exports' `types` conditions). */
export function declarationEntries(pkg: Record<string, unknown>): string[] {
  const out: string[] = [];
  const add = (v: unknown) => {
    if (typeof v === 'string' && v.trim()) out.push(v.trim());
  };
  add(pkg.types);
  add(pkg.typings);
  const walk = (v: unknown, key: string) => {
    if (typeof v === 'string') {
      if (key === 'types' || /\.d\.[mc]?ts$/.test(v)) add(v);
    } else if (Array.isArray(v)) {
      v.forEach((x) => walk(x, key));
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) walk(x, k);
    }
  };
  walk(pkg.exports, '');
  return [...new Set(out)];
}

/** Finds a declaration file for a module specifier relative to `fromDir` ('' = the package root). */
function resolveDeclaration(spec: string, fromDir: string, files: Map<string, ArchiveFile>): string | null {
  const joined = posix.normalize(posix.join(fromDir || '.', spec));
  if (joined.startsWith('..') || posix.isAbsolute(joined)) return null;
  const base = joined.replace(/^\.\//, '').replace(/\/$/, '');
  const candidates = [
    base,
    base.replace(/\.js$/, '.d.ts').replace(/\.mjs$/, '.d.mts').replace(/\.cjs$/, '.d.cts'),
    base.replace(/\.[mc]?[jt]s$/, '') + '.d.ts',
    `${base}.d.ts`,
    `${base}/index.d.ts`,
  ];
  for (const c of candidates) if (/\.d\.[mc]?ts$/.test(c) && files.has(c)) return c;
  return null;
}

/** The public declaration files: the entry points and what they import or re-export, in discovery order. */
export function publicDeclarations(pkg: Record<string, unknown>, files: Map<string, ArchiveFile>): { paths: string[]; truncated: boolean } {
  let entries = declarationEntries(pkg);
  if (entries.length === 0) {
    const main = typeof pkg.main === 'string' ? pkg.main : 'index.js';
    entries = [main, 'index.d.ts'];
  }
  const queue: string[] = [];
  for (const e of entries) {
    const r = resolveDeclaration(e.startsWith('.') ? e : `./${e}`, '', files);
    if (r && !queue.includes(r)) queue.push(r);
  }
  const seen = new Set(queue);
  for (let i = 0; i < queue.length; i++) {
    if (queue.length >= MAX_DECLARATION_FILES) return { paths: queue.slice(0, MAX_DECLARATION_FILES), truncated: true };
    const text = files.get(queue[i])!.data.toString('utf8');
    for (const spec of relativeImports(text)) {
      const r = resolveDeclaration(spec, posix.dirname(queue[i]), files);
      if (r && !seen.has(r)) {
        seen.add(r);
        queue.push(r);
      }
    }
  }
  return { paths: queue, truncated: false };
}

/**
 * Reads an npm package as a library: the registry's package document (the abbreviated form
 * when the registry offers it), the tarball of the pinned version (or `dist-tags.latest`),
 * checked against the published integrity and read in memory; then its README, docs folders
 * and other markdown (release notes and policy files excluded), and its public type
 * declarations (the .d.ts files package.json's types/typings/exports point at, and what those
 * import), each as a markdown page with one section per exported declaration.
 *
 * Every document carries `meta.version` and `meta.integrity`: a refresh of the same tarball
 * yields every previous document as unchanged without downloading it again.
 */
export class NpmSource extends RegistrySource {

  async *read(ctx: SourceContext): AsyncGenerator<SourceDocument> {
    const name = checkNpmName(ctx.spec.name);
    const registry = registryBase(ctx.spec.registry, this.options.npmRegistry ?? DEFAULT_PACKAGE_OPTIONS.npmRegistry, 'npm registry URL');
    ctx.signal.throwIfAborted();
    const o = this.options;
    const env = this.registry(ctx);

    ctx.progress({ message: `reading the npm registry for ${name}` });
    const docUrl = npmPackageUrl(registry, name);
    const doc = (await getJson(env, docUrl, `The npm package "${name}"`, 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*')) as NpmPackument | null;
    if (doc === null) {
      throw new RefdeskError(
        'library_not_found',
        `The npm package "${name}" was not found in the registry ${registry}. Check the name (scoped packages are written @scope/name) or the registry URL.`,
      );
    }
    if (typeof doc !== 'object' || !doc.versions || typeof doc.versions !== 'object') {
      throw new RefdeskError('invalid_source', `The registry ${registry} answered for "${name}" without a versions list; is this an npm registry?`);
    }
    const version = resolveNpmVersion(doc, name, ctx.version);
    const manifest = doc.versions[version];
    const count = Object.keys(doc.versions).length;
    ctx.log('info', `npm ${name}@${version}${ctx.version ? ` (pinned ${ctx.version})` : ''}; latest ${doc['dist-tags']?.latest ?? '?'}, ${count} version${count === 1 ? '' : 's'} published`);

    const tarball = manifest.dist?.tarball;
    if (typeof tarball !== 'string') throw new RefdeskError('invalid_source', `The registry lists no tarball for ${name}@${version}.`);
    const digest = npmDigest(manifest.dist?.integrity, manifest.dist?.shasum);
    if (!digest) ctx.log('warn', `the registry publishes no integrity for ${name}@${version}; the tarball is not verified`);
    const integrity = manifest.dist?.integrity ?? manifest.dist?.shasum ?? tarball;
    const meta = { version, integrity };

    if (allUnchanged(ctx, meta)) {
      ctx.log('info', `${name}@${version} is the tarball already indexed: reusing its ${ctx.previous.size} documents`);
      for (const [path, prev] of ctx.previous) {
        ctx.signal.throwIfAborted();
        yield { path, format: 'markdown', content: '', unchanged: true, hash: prev.hash, meta: { ...prev.meta } };
      }
      return;
    }

    ctx.progress({ message: `downloading ${name}@${version}` });
    const data = await download(env, tarball, `The tarball of ${name}@${version}`, digest);
    ctx.signal.throwIfAborted();
    const label = `the tarball of ${name}@${version}`;
    const { files, warnings } = await readTarGz(data, label, o, (p) => p === 'package.json' || isNpmDoc(p) || isDeclaration(p));
    for (const w of warnings) ctx.log('warn', w);
    const byPath = new Map(files.map((f) => [f.path, f]));

    let pkg: Record<string, unknown> = {};
    const pkgFile = byPath.get('package.json');
    if (pkgFile) {
      try {
        pkg = JSON.parse(pkgFile.data.toString('utf8')) as Record<string, unknown>;
      } catch {
        ctx.log('warn', `package.json of ${name}@${version} is not valid JSON; declaration entry points are guessed`);
      }
    } else {
      pkg = { ...manifest };
    }
    // The package's own name and summary (package.json), as the registry published them.
    const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v : undefined);
    const published = doc.time?.[version] ?? (doc as { modified?: string }).modified;
    ctx.setLibraryMeta?.({
      title: text(pkg.name) ?? name,
      description: text(pkg.description),
      homepage: text(pkg.homepage),
      official: true,
      ...(published ? { updatedAt: published } : {}),
    });

    let yielded = 0;
    let bytes = 0;
    const docs = files.filter((f) => isNpmDoc(f.path)).sort((a, b) => docOrder(a.path, b.path));
    if (!docs.some((f) => isReadme(f.path))) {
      const readme = doc.readme ?? manifest.readme;
      if (typeof readme === 'string' && readme.trim() && !/^ERROR: No README data found!?$/.test(readme.trim())) {
        yielded++;
        bytes += Buffer.byteLength(readme);
        yield { path: 'README.md', url: tarball, format: 'markdown', content: readme, title: `${name} README`, hash: sha256(readme), meta };
      }
    }
    for (const f of docs) {
      ctx.signal.throwIfAborted();
      const doc = fileDocument(f, meta);
      if (!doc) {
        ctx.log('warn', `skipped ${f.path}: not a text file`, { path: f.path });
        continue;
      }
      yielded++;
      bytes += f.data.length;
      yield doc;
    }

    const { paths: declarations, truncated } = publicDeclarations(pkg, byPath);
    if (truncated) ctx.log('warn', `more than ${MAX_DECLARATION_FILES} declaration files are reachable; the first ${MAX_DECLARATION_FILES} are indexed`);
    let apiEntries = 0;
    for (const path of declarations) {
      ctx.signal.throwIfAborted();
      const src = byPath.get(path)!.data.toString('utf8');
      const { markdown, count: n } = dtsToMarkdown(src, name, path);
      if (n === 0) continue;
      apiEntries += n;
      yielded++;
      bytes += src.length;
      yield { path, format: 'markdown', content: markdown, title: `${name} API: ${path}`, hash: sha256(markdown), meta };
    }
    ctx.progress({ files: yielded, bytes });
    ctx.log('info', `read ${yielded} documents of ${name}@${version}: ${docs.length} docs, ${declarations.length} declaration files with ${apiEntries} exported declarations`);
    if (yielded === 0) {
      throw new RefdeskError('no_documentation', `${name}@${version} has no README, no markdown and no type declarations to index.`);
    }
  }
}
