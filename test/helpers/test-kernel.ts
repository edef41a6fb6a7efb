/**
 * A real kernel for a test: a config file listing built-in (or fixture) plugins by path, written
 * into a fresh temporary directory, and the kernel made from it with its data in `<dir>/data`.
 * The setup many kernel-level tests repeated by hand.
 *
 *   let tk: TestKernel;
 *   before(async () => (tk = await openTestKernel({ prefix: 'refdesk-x-', plugins: ['plugins/store-embedded', ...] })));
 *   after(() => tk?.close());
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import type { Logger, RuntimeEnv } from '../../core/contracts.ts';
import { createKernel, type Kernel } from '../../core/kernel.ts';
import { createTestLogger } from '../../core/testing/run-source.ts';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A plugin of a test config: a path relative to the repository root (`plugins/source-upload`, a
 * folder means its index.ts; `test/fixtures/x.ts`) or absolute, with its options when it has any.
 */
export type TestPlugin = string | { use: string; options?: Record<string, unknown> };

/** The embedded store and the markdown chunker: the two plugins nearly every kernel test lists first. */
export const BASE_PLUGINS: readonly TestPlugin[] = ['plugins/store-embedded', 'plugins/chunker-markdown'];

function pluginPath(p: string): string {
  const abs = isAbsolute(p) ? p : join(REPO_ROOT, p);
  return abs.endsWith('.ts') ? abs : join(abs, 'index.ts');
}

/** The YAML of a config listing these plugins, with more top-level sections (`slots`, `network`, ...). */
export function testConfigYaml(plugins: readonly TestPlugin[], sections: Record<string, unknown> = {}): string {
  const entries = plugins.map((p) => (typeof p === 'string' ? { use: pluginPath(p) } : { ...p, use: pluginPath(p.use) }));
  return stringify({ plugins: entries, ...sections });
}

/** Writes a config file (testConfigYaml) and returns its path. */
export function writeTestConfig(file: string, plugins: readonly TestPlugin[], sections: Record<string, unknown> = {}): string {
  writeFileSync(file, testConfigYaml(plugins, sections));
  return file;
}

export interface TestKernelOptions {
  /** Prefix of the temporary directory's name, e.g. `refdesk-job-log-`. */
  prefix: string;
  plugins: readonly TestPlugin[];
  /** More top-level config sections. */
  sections?: Record<string, unknown>;
  /** Who opens the store (default `writer`). */
  mode?: RuntimeEnv['mode'];
  /** Default: a silent test logger. */
  logger?: Logger;
}

export interface TestKernel {
  /** The temporary directory: the config file, `data/`, and whatever the test puts there. */
  dir: string;
  dataDir: string;
  config: string;
  kernel: Kernel;
  /** Closes the kernel and removes the directory. */
  close(): Promise<void>;
}

/** A config in a fresh temporary directory and the kernel made from it, opened. */
export async function openTestKernel(options: TestKernelOptions): Promise<TestKernel> {
  const dir = mkdtempSync(join(tmpdir(), options.prefix));
  const dataDir = join(dir, 'data');
  const config = writeTestConfig(join(dir, 'refdesk.yaml'), options.plugins, options.sections);
  const remove = () => rmSync(dir, { recursive: true, force: true });
  let kernel: Kernel;
  try {
    kernel = await createKernel(config, { env: { dataDir, mode: options.mode ?? 'writer' }, logger: options.logger ?? createTestLogger() });
    await kernel.open();
  } catch (err) {
    remove();
    throw err;
  }
  return {
    dir,
    dataDir,
    config,
    kernel,
    async close() {
      try {
        await kernel.close();
      } finally {
        remove();
      }
    },
  };
}
