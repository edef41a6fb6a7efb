/**
 * What built a library's documents (issue 23 item 6), stored with every document of a build
 * (`BuildDocument.chunker`) as `<source part>.<chunker part>`:
 *
 * - the source part hashes the source kind, its plugin (name and version) and its options;
 * - the chunker part hashes the kernel version, the chunker slot's list (which chunker takes
 *   which format), and the chunker that chunked the document: its kind, plugin, version, options
 *   and revision.
 *
 * A version is re-chunked (core/rechunk.ts) when one of its documents was built by a source whose
 * options or plugin changed, or by a chunker that is no longer configured as it was; changing one
 * source's options re-chunks that source's libraries only, and a chunker change re-chunks what it
 * built. A library whose source plugin is no longer enabled is judged by the chunker part alone.
 */
import { createHash } from 'node:crypto';
import type { DocumentFormat } from './contracts.ts';
import type { Kernel, PluginOrigin } from './kernel.ts';
import { KERNEL_VERSION } from './version.ts';

const hash = (value: unknown) => createHash('sha1').update(JSON.stringify(value)).digest('hex').slice(0, 16);

/** The fingerprints of what would build a library of a source kind now. */
export interface BuildFingerprints {
  /** The fingerprint a document of this format gets now. */
  of(format: DocumentFormat): string;
  /** Whether a stored document's fingerprint is one this configuration gives (its source and chunker unchanged). */
  current(stored: string): boolean;
}

const originPart = (o: PluginOrigin | undefined) => (o ? { kind: o.kind, plugin: o.plugin, version: o.version, options: o.options } : null);

/** The source part of a kind's fingerprint; null when no source of that kind is enabled. */
export function sourceFingerprint(kernel: Kernel, sourceKind: string): string | null {
  const entry = kernel.sources.get(sourceKind);
  return entry ? hash({ source: sourceKind, origin: originPart(entry.origin) }) : null;
}

/** The chunker part for each configured chunker, in the kernel's order. */
export function chunkerFingerprints(kernel: Kernel): string[] {
  const slot = kernel.config.slots.chunkers ?? null;
  return kernel.chunkers.map((c, i) => hash({ kernel: KERNEL_VERSION, slot, chunker: originPart(kernel.chunkerOrigins[i]), revision: c.revision ?? 0 }));
}

export function buildFingerprints(kernel: Kernel, sourceKind: string): BuildFingerprints {
  const source = sourceFingerprint(kernel, sourceKind);
  const chunkers = chunkerFingerprints(kernel);
  const current = new Set(chunkers);
  return {
    of(format) {
      const i = Math.max(0, kernel.chunkers.indexOf(kernel.chunkerFor(format)));
      return `${source ?? 'none'}.${chunkers[i]}`;
    },
    current(stored) {
      const dot = stored.indexOf('.');
      if (dot < 0) return false; // a fingerprint of the whole configuration (before per-plugin ones): built otherwise
      const [s, c] = [stored.slice(0, dot), stored.slice(dot + 1)];
      return current.has(c) && (source === null || s === source);
    },
  };
}
