/**
 * A kernel for tests of network sources: the embedded store in a temp data directory, the
 * markdown chunker, the given source plugins, and `network.allowHosts: [127.0.0.1]` so the
 * kernel's Fetch may reach the test's own servers.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { createKernel, type Kernel } from '../../core/kernel.ts';
import { createConsoleLogger } from '../../core/services.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `plugins` maps a plugin folder (e.g. `source-llms-txt`) to its options by kind. */
export async function networkKernel(t: TestContext, plugins: Record<string, Record<string, Record<string, unknown>>>): Promise<Kernel> {
  const dir = mkdtempSync(join(tmpdir(), 'refdesk-net-kernel-'));
  const entries = Object.entries(plugins)
    .map(([folder, options]) => `  - use: ${JSON.stringify(join(ROOT, 'plugins', folder, 'index.ts'))}\n    options: ${JSON.stringify(options)}`)
    .join('\n');
  const yaml = [
    'plugins:',
    `  - use: ${JSON.stringify(join(ROOT, 'plugins', 'store-embedded', 'index.ts'))}`,
    `  - use: ${JSON.stringify(join(ROOT, 'plugins', 'chunker-markdown', 'index.ts'))}`,
    entries,
    'slots:',
    '  store: embedded',
    '  chunkers: [markdown]',
    'network:',
    "  allowHosts: ['127.0.0.1']",
    '',
  ].join('\n');
  const file = join(dir, 'refdesk.yaml');
  writeFileSync(file, yaml);
  const kernel = await createKernel(file, { env: { dataDir: join(dir, 'data'), mode: 'writer' }, logger: createConsoleLogger('error', () => {}) });
  await kernel.open();
  t.after(async () => {
    await kernel.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return kernel;
}
