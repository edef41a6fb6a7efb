/** Starts the real Refdesk server (`refdesk serve`) as a child process on a data directory. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { throwawayLicenceEnv } from '../../server/licence-throwaway.ts';

export interface RunningServer {
  baseUrl: string;
  stop(): Promise<void>;
}

/** A server process that has started listening: the child, its base URL and what it wrote to stderr. */
export interface LaunchedServer {
  child: ChildProcess;
  baseUrl: string;
  stderr(): string;
}

/**
 * Spawns a Refdesk server process (`args` after node, e.g. `bin/refdesk.js serve`) on 127.0.0.1
 * with a free port and the given data directory; resolves once it says which port it listens on.
 */
export async function launchServer(root: string, dataDir: string, args: string[]): Promise<LaunchedServer> {
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: root,
    // A licence from a throwaway local issuer (no vendor key needed to measure).
    env: { ...process.env, ...throwawayLicenceEnv('Refdesk benchmark', { existingIssuerKeys: process.env.LICENSE_ISSUER_KEYS }), DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'error', NODE_NO_WARNINGS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the server did not start within 60 s: ${stderr.slice(-2000)}`)), 60_000);
    child.stdout!.on('data', (d) => {
      out += String(d);
      const m = out.match(/listening on port (\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code ?? signal}) before listening: ${stderr.slice(-2000)}`));
    });
  });
  return { child, baseUrl: `http://127.0.0.1:${port}`, stderr: () => stderr };
}

/**
 * Spawns `refdesk serve` (bin/refdesk.js: the compiled server when dist/ is current, else the
 * sources through tsx) on 127.0.0.1 with a free port; resolves once it listens.
 */
export async function startServer(root: string, dataDir: string): Promise<RunningServer> {
  const { child, baseUrl } = await launchServer(root, dataDir, [join(root, 'bin', 'refdesk.js'), 'serve']);
  return {
    baseUrl,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
