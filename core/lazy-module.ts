/**
 * A CommonJS dependency loaded at its first use instead of at import time: `const jsdom =
 * lazyModule<typeof import('jsdom')>('jsdom')`, then `new (jsdom().JSDOM)(html)`. For heavy
 * libraries that only some requests need (jsdom alone costs about 0.8 s of CPU to import), so
 * that a server starts without paying for them. Resolved from the package's own node_modules.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export function lazyModule<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(name) as T);
}
