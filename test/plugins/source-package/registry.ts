/**
 * Registry-shaped test servers on 127.0.0.1: an npm registry (packuments, tarballs) and a PyPI
 * JSON API (project and release documents, sdists, wheels), serving archives the test builds.
 */
import { createHash } from 'node:crypto';
import type { TestContext } from 'node:test';
import { send, startServer, type TestServer } from '../../helpers/route-server.ts';
import { buildTarGz, buildZip } from '../source-upload/archive-builders.ts';

export interface NpmVersionInput {
  /** Files of the tarball, without the `package/` prefix. */
  files: Record<string, string>;
}

export interface FakeRegistry {
  server: TestServer;
  base: string;
  /** Status to answer instead, by exact path, for the next N requests (N = count). */
  fail(path: string, status: number, count: number): void;
}

function sha512Integrity(data: Buffer): string {
  return `sha512-${createHash('sha512').update(data).digest('base64')}`;
}

/** npm registry: `packages` maps a name to its versions (in publish order) and dist-tags. */
export async function startNpmRegistry(
  t: TestContext | undefined,
  packages: Record<string, { versions: Record<string, NpmVersionInput>; tags?: Record<string, string>; readme?: string }>,
): Promise<FakeRegistry> {
  const failures = new Map<string, { status: number; left: number }>();
  const tarballs = new Map<string, Buffer>();
  let base = '';
  const server = await startServer((_req, res, url) => {
    const f = failures.get(url.pathname);
    if (f && f.left > 0) {
      f.left--;
      return send(res, f.status, 'failing on purpose');
    }
    if (url.pathname.startsWith('/-/tarballs/')) {
      const data = tarballs.get(url.pathname);
      return data ? send(res, 200, data, 'application/octet-stream') : send(res, 404, 'no tarball');
    }
    // Packument: /<name> or /@scope%2fname (the '/' of a scope arrives encoded).
    const name = decodeURIComponent(url.pathname.slice(1));
    const pkg = packages[name];
    if (!pkg) return send(res, 404, JSON.stringify({ error: 'Not found' }), 'application/json');
    const versions: Record<string, unknown> = {};
    for (const [v, input] of Object.entries(pkg.versions)) {
      const file = `/-/tarballs/${encodeURIComponent(name)}-${v}.tgz`;
      let data = tarballs.get(file);
      if (!data) {
        data = buildTarGz(Object.entries(input.files).map(([p, body]) => ({ name: `package/${p}`, data: body })));
        tarballs.set(file, data);
      }
      versions[v] = { name, version: v, dist: { tarball: `${base}${file}`, integrity: sha512Integrity(data) } };
    }
    const latest = Object.keys(pkg.versions).pop()!;
    send(res, 200, JSON.stringify({ name, 'dist-tags': { latest, ...pkg.tags }, versions, ...(pkg.readme ? { readme: pkg.readme } : {}) }), 'application/json');
  }, t);
  base = server.base;
  return {
    server,
    base,
    fail: (path, status, count) => failures.set(path, { status, left: count }),
  };
}

export interface PypiReleaseInput {
  description?: string;
  /** `info.name` as the project spells it (default: the normalized name). */
  displayName?: string;
  /** `info.summary` (default 'A project'). */
  summary?: string;
  contentType?: string | null;
  sdist?: Record<string, string>;
  wheel?: Record<string, string>;
  /** Publish a wrong sha256 for the archive. */
  badDigest?: boolean;
}

/** PyPI JSON API: `projects` maps a normalized name to its releases (in order; the last is latest). */
export async function startPypiIndex(t: TestContext | undefined, projects: Record<string, Record<string, PypiReleaseInput>>): Promise<FakeRegistry> {
  const failures = new Map<string, { status: number; left: number }>();
  const files = new Map<string, Buffer>();
  let base = '';
  const fileList = (name: string, version: string, r: PypiReleaseInput) => {
    const out: unknown[] = [];
    const add = (filename: string, packagetype: string, data: Buffer) => {
      const path = `/files/${filename}`;
      files.set(path, data);
      const sha = createHash('sha256').update(data).digest('hex');
      out.push({ filename, packagetype, url: `${base}${path}`, digests: { sha256: r.badDigest ? '0'.repeat(64) : sha }, yanked: false });
    };
    if (r.sdist) add(`${name}-${version}.tar.gz`, 'sdist', buildTarGz(Object.entries(r.sdist).map(([p, d]) => ({ name: `${name}-${version}/${p}`, data: d }))));
    if (r.wheel) add(`${name}-${version}-py3-none-any.whl`, 'bdist_wheel', buildZip(Object.entries(r.wheel).map(([p, d]) => ({ name: p, data: d, method: 'deflate' as const }))));
    return out;
  };
  const server = await startServer((_req, res, url) => {
    const f = failures.get(url.pathname);
    if (f && f.left > 0) {
      f.left--;
      return send(res, f.status, 'failing on purpose');
    }
    if (url.pathname.startsWith('/files/')) {
      const data = files.get(url.pathname);
      return data ? send(res, 200, data, 'application/octet-stream') : send(res, 404, 'no file');
    }
    const m = /^\/pypi\/([^/]+)(?:\/([^/]+))?\/json$/.exec(url.pathname);
    const project = m ? projects[m[1]] : undefined;
    if (!m || !project) return send(res, 404, JSON.stringify({ message: 'Not Found' }), 'application/json');
    const versions = Object.keys(project);
    const version = m[2] ?? versions[versions.length - 1];
    const r = project[version];
    if (!r) return send(res, 404, JSON.stringify({ message: 'Not Found' }), 'application/json');
    const releases = Object.fromEntries(versions.map((v) => [v, fileList(m[1], v, project[v])]));
    send(
      res,
      200,
      JSON.stringify({
        info: { name: r.displayName ?? m[1], version, summary: r.summary ?? 'A project', description: r.description ?? '', description_content_type: r.contentType ?? null },
        urls: releases[version],
        releases,
      }),
      'application/json',
    );
  }, t);
  base = server.base;
  return { server, base, fail: (path, status, count) => failures.set(path, { status, left: count }) };
}
