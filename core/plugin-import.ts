/**
 * Imports a plugin module by the specifier resolvePluginSpecifier gives. The compiled runtime
 * (dist/, plain Node) has no loader for TypeScript, so the first `.ts` / `.mts` / `.cts` plugin
 * it meets registers tsx (a dependency of the package) before importing it: plugins of your own
 * may stay TypeScript whether `refdesk` runs the sources or the build. Under tsx (the sources)
 * nothing is registered.
 */
const TYPESCRIPT_FILE = /^file:.*\.[cm]?ts$/;
/** This module runs compiled (dist/ or a bundle of it) rather than through tsx. */
const COMPILED = !/\.[cm]?ts$/.test(new URL(import.meta.url).pathname);
/** tsx's loader, registered once for the process (the first TypeScript plugin starts it; later ones wait on it). */
let tsxLoader: Promise<void> | null = null;

export async function importPluginModule(specifier: string): Promise<unknown> {
  if (COMPILED && TYPESCRIPT_FILE.test(specifier)) await (tsxLoader ??= import('tsx/esm/api').then(({ register }) => void register()));
  return import(specifier);
}
