import semver from 'semver';
import type { SourceContext, SourceDocument } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { readTarGz, readZip, type ArchiveRead } from './archive.ts';
import { normalizePypiName, pypiJsonUrl, registryBase } from './names.ts';
import { docOrder, fileDocument, isPypiDoc, isReadme, sha256 } from './package-docs.ts';
import { download, getJson, type Digest } from './registry-http.ts';
import { rstToMarkdown } from './rst.ts';
import { allUnchanged, RegistrySource } from './shared.ts';

/** A file of a release in the PyPI JSON API. */
export interface PypiFile {
  filename?: string;
  packagetype?: string;
  url?: string;
  digests?: { sha256?: string };
  yanked?: boolean;
}

/** The parts of the PyPI JSON API answer we read. */
export interface PypiProject {
  info?: { name?: string; version?: string; summary?: string; description?: string; description_content_type?: string | null; home_page?: string };
  urls?: PypiFile[];
  releases?: Record<string, PypiFile[]>;
}

/**
 * Released versions, newest first: semver order where versions parse (loosely, so `2.1` and
 * `1.0.0rc1` count), the rest after them. The lead can show them as the library's versions.
 */
export function pypiVersions(doc: PypiProject): string[] {
  const all = Object.keys(doc.releases ?? {});
  const key = (v: string) => semver.coerce(v);
  // Same release numbers: a pre-release (2.0rc1, 2.0.dev1) is older than the release, a post-release newer.
  const rank = (v: string) => {
    const rest = v.replace(/^v?\d+(\.\d+)*/, '').replace(/^[.-]/, '').toLowerCase();
    if (rest === '') return 1;
    return /^(dev|a|alpha|b|beta|c|rc|pre|preview)/.test(rest) ? 0 : 2;
  };
  return [...all].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    if (ka && kb) return semver.rcompare(ka, kb) || rank(b) - rank(a) || (a < b ? 1 : a > b ? -1 : 0);
    return ka ? -1 : kb ? 1 : a < b ? 1 : -1;
  });
}

/** The long description as a document: markdown as is, rst converted line for line, else text. */
export function longDescription(info: NonNullable<PypiProject['info']>): SourceDocument | null {
  const text = info.description ?? '';
  if (!text.trim() || text.trim() === 'UNKNOWN') return null;
  const type = (info.description_content_type ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'text/markdown') return { path: 'README.md', format: 'markdown', content: text };
  if (type === 'text/plain') return { path: 'README.txt', format: 'text', content: text };
  // PyPI renders a missing content type as reStructuredText.
  return { path: 'README.rst', format: 'markdown', content: rstToMarkdown(text) };
}

function pickArchive(files: PypiFile[]): { file: PypiFile; kind: 'sdist' | 'wheel' } | null {
  const usable = files.filter((f) => typeof f.url === 'string' && !f.yanked);
  const sdist = usable.find((f) => f.packagetype === 'sdist' && /\.(tar\.gz|tgz)$/i.test(f.filename ?? f.url!));
  if (sdist) return { file: sdist, kind: 'sdist' };
  const wheel = usable.find((f) => f.packagetype === 'bdist_wheel' && /\.whl$/i.test(f.filename ?? f.url!));
  return wheel ? { file: wheel, kind: 'wheel' } : null;
}

/**
 * Reads a PyPI project as a library: the JSON API (`<index>/pypi/<name>/json`, or
 * `/<version>/json` when pinned), the long description (markdown, or reStructuredText converted
 * line for line), then the sdist (preferred: it carries the docs folder) or else the wheel,
 * checked against its published sha256 and read in memory, for README, top-level markdown and
 * docs/ .md/.rst/.txt files.
 *
 * Every document carries `meta.version` and `meta.sha256` (of the archive): a refresh of the
 * same release yields every previous document as unchanged without downloading it.
 */
export class PypiSource extends RegistrySource {

  async *read(ctx: SourceContext): AsyncGenerator<SourceDocument> {
    const name = normalizePypiName(ctx.spec.name);
    const index = registryBase(ctx.spec.index, this.options.pypiIndex, 'PyPI index URL');
    ctx.signal.throwIfAborted();
    const o = this.options;
    const env = this.registry(ctx);

    ctx.progress({ message: `reading the PyPI index for ${name}` });
    const pinned = ctx.version.replace(/^v(?=\d)/, '');
    const doc = (await getJson(env, pypiJsonUrl(index, name, pinned), `The PyPI project "${name}"`)) as PypiProject | null;
    if (doc === null) {
      if (pinned) {
        const project = (await getJson(env, pypiJsonUrl(index, name), `The PyPI project "${name}"`)) as PypiProject | null;
        if (project) {
          const recent = pypiVersions(project).slice(0, 5).join(', ');
          throw new RefdeskError('version_not_found', `The PyPI project "${name}" has no release "${pinned.slice(0, 50)}" (latest: ${project.info?.version ?? 'none'}; recent: ${recent || 'none'}).`);
        }
      }
      throw new RefdeskError('library_not_found', `The PyPI project "${name}" was not found on ${index}. Check the name or the index URL.`);
    }
    if (typeof doc !== 'object' || !doc.info) {
      throw new RefdeskError('invalid_source', `The index ${index} answered for "${name}" without project info; is this a PyPI-compatible JSON API?`);
    }
    const version = doc.info.version ?? pinned;
    const picked = pickArchive(doc.urls ?? []);
    const digestHex = picked?.file.digests?.sha256?.toLowerCase() ?? '';
    const meta = { version, sha256: digestHex || 'none' };
    const uploaded = (picked?.file as { upload_time_iso_8601?: string } | undefined)?.upload_time_iso_8601;
    ctx.setLibraryMeta?.({
      title: doc.info.name || name,
      ...(doc.info.summary ? { description: doc.info.summary } : {}),
      ...(doc.info.home_page ? { homepage: doc.info.home_page } : {}),
      official: true,
      ...(uploaded ? { updatedAt: uploaded } : {}),
    });
    ctx.log('info', `PyPI ${name} ${version}${pinned ? ' (pinned)' : ''}: ${picked ? `${picked.kind} ${picked.file.filename ?? ''}` : 'no sdist or wheel, long description only'}`);

    if (allUnchanged(ctx, meta) && digestHex) {
      ctx.log('info', `${name} ${version} is the release already indexed: reusing its ${ctx.previous.size} documents`);
      for (const [path, prev] of ctx.previous) {
        ctx.signal.throwIfAborted();
        yield { path, format: 'markdown', content: '', unchanged: true, hash: prev.hash, meta: { ...prev.meta } };
      }
      return;
    }

    let yielded = 0;
    let bytes = 0;
    const projectUrl = `${index}/project/${name}/${version}/`;
    const long = longDescription(doc.info);
    if (long) {
      yielded++;
      bytes += long.content.length;
      yield { ...long, url: projectUrl, title: `${doc.info.name ?? name} ${version}`, hash: sha256(long.content), meta };
    }

    if (picked) {
      ctx.progress({ message: `downloading ${picked.file.filename ?? picked.kind}` });
      const digest: Digest | null = digestHex ? { algorithm: 'sha256', hex: digestHex } : null;
      if (!digest) ctx.log('warn', `the index publishes no sha256 for ${picked.file.filename ?? picked.kind}; the download is not verified`);
      const label = `the ${picked.kind} of ${name} ${version}`;
      const data = await download(env, picked.file.url!, `The ${picked.kind} of ${name} ${version}`, digest);
      ctx.signal.throwIfAborted();
      const read: ArchiveRead = picked.kind === 'sdist' ? await readTarGz(data, label, o, isPypiDoc, true) : await readZip(data, label, o, isPypiDoc, false);
      for (const w of read.warnings) ctx.log('warn', w);
      for (const f of [...read.files].sort((a, b) => docOrder(a.path, b.path))) {
        ctx.signal.throwIfAborted();
        if (long && isReadme(f.path)) continue; // the long description is the README
        const doc = fileDocument(f, meta);
        if (!doc) {
          ctx.log('warn', `skipped ${f.path}: not a text file`, { path: f.path });
          continue;
        }
        yielded++;
        bytes += f.data.length;
        yield doc;
      }
    }
    ctx.progress({ files: yielded, bytes });
    ctx.log('info', `read ${yielded} documents of ${name} ${version}`);
    if (yielded === 0) throw new RefdeskError('no_documentation', `${name} ${version} has no description and no documentation files to index.`);
  }
}
