/** `refdesk add npm:<name>` / `pypi:<name>` / `packages:<name>` (or `--source <kind> <name>`): the spec names the package. */
import type { CliTargetDeclaration } from '../../core/define.ts';

export const packageCliTarget = (prefix: string): CliTargetDeclaration => ({
  prefixes: [prefix],
  toSpec: ({ rest }) => ({ spec: { name: rest } }),
});
