import { definePlugin, defineSource } from '../../core/define.ts';
import { Tokens } from '../../core/di-tokens.ts';
import { packageCliTarget } from './cli-target.ts';
import { deriveNpmId, derivePypiId } from './names.ts';
import { NpmSource } from './npm-source.ts';
import { PypiSource } from './pypi-source.ts';
import { PackagesSource } from './packages-source.ts';
import { npmOptionsSchema, npmSpecSchema, packagesOptionsSchema, packagesSpecSchema, pypiOptionsSchema, pypiSpecSchema } from './schema.ts';

export default definePlugin({
  name: '@refdesk/source-package',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineSource({
      kind: 'npm',
      title: 'npm package',
      idPrefix: 'npm',
      description: 'An npm package (README, docs, markdown and public type declarations of its tarball) becomes a /npm/<name> library.',
      options: npmOptionsSchema,
      specSchema: npmSpecSchema,
      deps: { fetch: Tokens.Fetch, policy: Tokens.NetworkPolicy },
      deriveId: deriveNpmId,
      policyCategory: 'packages',
      cliTarget: packageCliTarget('npm'),
      create(options, deps) {
        return new NpmSource(options, deps);
      },
    }),
    defineSource({
      kind: 'pypi',
      title: 'PyPI package',
      idPrefix: 'pypi',
      description: 'A PyPI project (long description, docs of its sdist or wheel) becomes a /pypi/<name> library.',
      options: pypiOptionsSchema,
      specSchema: pypiSpecSchema,
      deps: { fetch: Tokens.Fetch, policy: Tokens.NetworkPolicy },
      deriveId: derivePypiId,
      policyCategory: 'packages',
      cliTarget: packageCliTarget('pypi'),
      create(options, deps) {
        return new PypiSource(options, deps);
      },
    }),
    defineSource({
      kind: 'packages',
      title: 'Package (npm or PyPI)',
      idPrefix: 'packages',
      description: 'A package by name alone becomes a /packages/<name> library: the npm registry is asked first, then PyPI, when it is added.',
      options: packagesOptionsSchema,
      specSchema: packagesSpecSchema,
      deps: { fetch: Tokens.Fetch, policy: Tokens.NetworkPolicy },
      deriveId: (spec) => `/packages/${String(spec.name)}`,
      policyCategory: 'packages',
      cliTarget: packageCliTarget('packages'),
      create(options, deps) {
        return new PackagesSource(options, deps);
      },
    }),
  ],
});
