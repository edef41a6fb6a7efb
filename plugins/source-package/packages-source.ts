/**
 * `/packages/<name>`: a package whose registry Refdesk decides. When the library is added,
 * `prepare` asks the npm registry, then PyPI (resolvePackageSource explains the rule) and stores
 * the answer in the spec, so a refresh never switches registry. Reading is the npm or PyPI
 * source's own.
 */
import type { Source, SourceContext, SourceDocument } from '../../core/contracts.ts';
import { RefdeskError } from '../../core/errors.ts';
import { NpmSource } from './npm-source.ts';
import { PypiSource } from './pypi-source.ts';
import { resolvePackageSource } from './resolve-package.ts';
import type { PackageOptions } from './schema.ts';
import type { RegistryDeps } from './shared.ts';

export class PackagesSource implements Source {
  private readonly npm: NpmSource;
  private readonly pypi: PypiSource;

  constructor(options: Partial<PackageOptions> | undefined, private readonly deps: RegistryDeps) {
    this.npm = new NpmSource(options, deps);
    this.pypi = new PypiSource(options, deps);
  }

  async prepare(spec: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
    if (spec.registry === 'npm' || spec.registry === 'pypi') return spec;
    const resolved = await resolvePackageSource(String(spec.name), this.deps.fetch, {
      npmRegistry: this.npm.options.npmRegistry,
      pypiIndex: this.npm.options.pypiIndex,
      retry: { attempts: this.npm.options.retryAttempts, baseDelayMs: this.npm.options.retryBaseDelayMs },
      signal,
    });
    return { name: resolved.spec.name, registry: resolved.kind };
  }

  read(ctx: SourceContext): AsyncIterable<SourceDocument> {
    const { name, registry } = ctx.spec;
    if (registry !== 'npm' && registry !== 'pypi') {
      throw new RefdeskError('invalid_source', 'This /packages library was stored without its registry; add it again.');
    }
    return (registry === 'npm' ? this.npm : this.pypi).read({ ...ctx, spec: { name } });
  }
}
