/**
 * Capabilities a source declares beyond its spec (SourceDefinition.parseAddress, specUpload):
 * the routes and web UI forms tied to one (POST /api/parse, POST /api/v2/add/openapi-upload)
 * serve the first loaded source that declares it. When none does, the default distribution's
 * declarer names the source to enable (400 `source_not_enabled`), as the alias add routes do.
 */
import type { Kernel } from '../core/kernel.ts';
import type { SourceDefinition } from '../core/define.ts';
import { defaultConfigPath, loadConfig } from '../core/config.ts';

export type Capability = 'parseAddress' | 'specUpload';
export type Capable<C extends Capability> = { kind: string; def: SourceDefinition & Required<Pick<SourceDefinition, C>> };

/** The first loaded source declaring `cap` (config order), or undefined. */
export function loadedCapable<C extends Capability>(kernel: Kernel, cap: C): Capable<C> | undefined {
  for (const { kind, def } of kernel.sources.values()) if (def[cap]) return { kind, def: def as Capable<C>['def'] };
  return undefined;
}

let defaults: Promise<Array<{ kind: string; def: SourceDefinition }>> | undefined;

/** The default distribution's sources (config/default.yaml), loaded once, when first asked; none when it cannot load. */
export function defaultSources(): Promise<Array<{ kind: string; def: SourceDefinition }>> {
  defaults ??= loadConfig(defaultConfigPath()).then(
    (loaded) => [...loaded.definitions.get('source')!.values()].map(({ def }) => ({ kind: def.kind, def: def as SourceDefinition })),
    () => [],
  );
  return defaults;
}

/**
 * The source serving `cap`: the first loaded one declaring it, else the default distribution's
 * (not loaded: the caller's ensureSourceEnabled refuses it, naming how to enable it); undefined
 * when no source anywhere declares it.
 */
export async function capableSource<C extends Capability>(kernel: Kernel, cap: C): Promise<Capable<C> | undefined> {
  return loadedCapable(kernel, cap) ?? ((await defaultSources()).find((s) => s.def[cap]) as Capable<C> | undefined);
}

/**
 * The source kind that takes documentation sent as files (POST /api/libraries/upload, the web
 * UI's upload form, the CLI's /upload): the first loaded source whose `addPayload` is `files`;
 * when none is loaded, the default distribution's (`upload`), which the caller's
 * ensureSourceEnabled then refuses naming how to enable it.
 */
export function filesSourceKind(kernel: Kernel): string {
  for (const { kind, def } of kernel.sources.values()) if (def.addPayload === 'files') return kind;
  return 'upload';
}
