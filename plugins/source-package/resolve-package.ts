import type { Fetch } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { DEFAULT_RETRY, fetchWithRetry, httpFailure, type RetryPolicy } from '../../core/net/retry.ts';
import { checkNpmName, normalizePypiName, npmPackageUrl, pypiJsonUrl, registryBase } from './names.ts';
import { DEFAULT_PACKAGE_OPTIONS } from './schema.ts';

export interface ResolvePackageOptions {
  npmRegistry?: string;
  pypiIndex?: string;
  retry?: Partial<RetryPolicy>;
  signal?: AbortSignal;
}

export interface ResolvedPackage {
  /** The source kind to add the library with. */
  kind: 'npm' | 'pypi';
  /** The spec for that source (`{ name }`; the registry is the operator's default). */
  spec: { name: string };
}

async function exists(fetch: Fetch, url: string, what: string, options: ResolvePackageOptions, accept: string): Promise<boolean> {
  const { response, attempts } = await fetchWithRetry(fetch, url, { method: 'GET', headers: { accept } }, {
    policy: { ...DEFAULT_RETRY, ...options.retry },
    signal: options.signal,
  });
  await response.body?.cancel().catch(() => {});
  if (response.ok) return true;
  if (response.status === 404 || response.status === 410) return false;
  throw httpFailure(url, response, what, { attempts });
}

/**
 * Which registry a `/packages/<name>` library comes from: the npm registry is asked first, then
 * PyPI. When the name exists on both, npm wins. Why: the rule has to be deterministic (the same
 * ID must always mean the same package), npm is the registry with by far the most packages and
 * the one most documentation lookups are about, and a name published on both is usually a
 * JavaScript package with an unrelated or squatted Python namesake. Whoever wants the other one
 * adds `/pypi/<name>` (or `/npm/<name>`) explicitly.
 *
 * A name only one registry allows (a scoped `@scope/pkg` for npm, upper case for PyPI's
 * normalisation) is only looked up there. Neither registry having it gives a
 * `library_not_found` RefdeskError; a registry that keeps failing gives `invalid_source` (we do
 * not fall through to the other registry on an outage, which would pick the wrong package).
 */
export async function resolvePackageSource(name: string, fetch: Fetch, options: ResolvePackageOptions = {}): Promise<ResolvedPackage> {
  const npmRegistry = registryBase(options.npmRegistry, DEFAULT_PACKAGE_OPTIONS.npmRegistry, 'npm registry URL');
  const pypiIndex = registryBase(options.pypiIndex, DEFAULT_PACKAGE_OPTIONS.pypiIndex, 'PyPI index URL');
  let npmName: string | null = null;
  let pypiName: string | null = null;
  try {
    npmName = checkNpmName(name);
  } catch {
    npmName = null;
  }
  try {
    pypiName = normalizePypiName(name);
  } catch {
    pypiName = null;
  }
  if (npmName === null && pypiName === null) {
    throw new RefdeskError('invalid_request', `"${String(name).slice(0, 80)}" is neither a valid npm package name nor a valid PyPI project name.`);
  }
  if (npmName !== null && (await exists(fetch, npmPackageUrl(npmRegistry, npmName), `The npm package "${npmName}"`, options, 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8'))) {
    return { kind: 'npm', spec: { name: npmName } };
  }
  if (pypiName !== null && (await exists(fetch, pypiJsonUrl(pypiIndex, pypiName), `The PyPI project "${pypiName}"`, options, 'application/json'))) {
    return { kind: 'pypi', spec: { name: pypiName } };
  }
  throw new RefdeskError('library_not_found', `No npm package and no PyPI project is named "${String(name).slice(0, 80)}" (looked in ${npmRegistry} and ${pypiIndex}).`);
}
