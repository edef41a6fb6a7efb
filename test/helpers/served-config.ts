/**
 * A real Refdesk HTTP server on 127.0.0.1 over a config the test writes (a config object as
 * JSON, or YAML text such as the default distribution's): a temporary folder holding the config
 * and the data directory, the kernel opened, one member API key, the app listening. `close()`
 * stops the jobs and the server, closes the kernel and removes the folder.
 */
import { createServer } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKernel, type Kernel } from '../../core/kernel.ts';
import type { Logger } from '../../core/contracts.ts';
import { createConsoleLogger } from '../../core/services.ts';
import { createApiKey } from '../../server/access/api-keys.ts';
import { createApp, type AppOptions, type RefdeskApp } from '../../server/app.ts';
import { listenOnLoopback } from './listen.ts';

export interface ServedConfig {
  /** The temporary folder: `refdesk.yaml` and the data directory `data/`. */
  dir: string;
  kernel: Kernel;
  refdesk: RefdeskApp;
  base: string;
  /** A member API key. */
  key: string;
  close(): Promise<void>;
}

export async function serveConfig(config: Record<string, unknown> | string, opts: { prefix?: string; logger?: Logger; app?: AppOptions; keyName?: string } = {}): Promise<ServedConfig> {
  const dir = mkdtempSync(join(tmpdir(), opts.prefix ?? 'refdesk-served-'));
  const file = join(dir, 'refdesk.yaml');
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config, null, 2));
  const kernel = await createKernel(file, { env: { dataDir: join(dir, 'data'), mode: 'server', port: 0 }, logger: opts.logger ?? createConsoleLogger('error', () => {}) });
  await kernel.open();
  const { plans, defaultPlan } = kernel.config.rateLimits;
  const key = (await createApiKey(kernel.store, { name: opts.keyName ?? 'test' }, { names: Object.keys(plans), defaultPlan })).key;
  const refdesk = createApp(kernel, opts.app);
  const http = createServer(refdesk.app.callback());
  const base = await listenOnLoopback(http);
  return {
    dir,
    kernel,
    refdesk,
    base,
    key,
    async close() {
      await refdesk.jobs.stop();
      http.closeAllConnections();
      http.close();
      await kernel.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
