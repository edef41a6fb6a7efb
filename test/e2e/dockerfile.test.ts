/**
 * The Dockerfile, without a container engine: its steps are read from the file and run here, so
 * the image cannot drift from what is tested. Each stage gets a folder of its own (inside the
 * checkout: the build needs to be there); COPY copies from the checkout (or the build stage's
 * folder), RUN steps are matched to what mirrors them (an unknown RUN step fails the test):
 *
 *   npm ci (all dependencies)   the checkout's node_modules, which .ci/run installs with that command
 *   npm ci --omit=dev           a hard-linked copy of node_modules without the packages
 *                               package-lock.json marks dev: the runtime sees production packages only
 *   npm run build               run for real in the build stage's folder
 *   apt-get install git ca-certificates   checked present on this machine (the server needs them)
 *   mkdir -p /data, chown       the data directory, a temporary folder here
 *
 * Then the runtime stage's CMD starts the compiled server with the image's ENV (PORT=0 and a
 * temporary DATA_DIR instead), and the HEALTHCHECK command itself must exit 0 against it.
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ROOT, cliEnv, httpGet, makeDataDir, removeDataDir, stopAll, stopProcess } from './refdesk-process.ts';

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  name: string;
  steps: Instruction[];
}

/** The Dockerfile's stages and instructions (continuation lines joined, comments dropped). */
export function parseDockerfile(text: string): Stage[] {
  const lines = text.replace(/\\\r?\n/g, ' ').split(/\r?\n/);
  const stages: Stage[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([A-Z]+)\s+(.*)$/.exec(line);
    assert.ok(m, `unreadable Dockerfile line: ${line}`);
    const [, op, args] = m;
    if (op === 'FROM') {
      const as = /\sAS\s+(\S+)/i.exec(args!);
      stages.push({ name: as?.[1] ?? `stage${stages.length}`, steps: [] });
    }
    assert.ok(stages.length > 0, `${op} before FROM`);
    stages[stages.length - 1]!.steps.push({ op: op!, args: args! });
  }
  return stages;
}

/** `KEY=value KEY2=value` (no quoting needed in this Dockerfile). */
function parseEnv(args: string): Record<string, string> {
  return Object.fromEntries(args.split(/\s+/).map((kv) => kv.split('=') as [string, string]));
}

const hasTypescript = (() => {
  try {
    createRequire(import.meta.url).resolve('typescript/bin/tsc');
    return true;
  } catch {
    return false;
  }
})();

const DOCKERFILE = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

describe('Dockerfile, run step by step without a container engine', { timeout: 900_000, skip: hasTypescript ? false : 'typescript (a dev dependency) is not installed' }, () => {
  const work = (() => {
    mkdirSync(join(ROOT, '.tmp'), { recursive: true });
    return mkdtempSync(join(ROOT, '.tmp', 'docker-'));
  })();
  const dataDir = makeDataDir('refdesk-docker-data-');
  after(async () => {
    await stopAll();
    rmSync(work, { recursive: true, force: true });
    removeDataDir(dataDir);
  });

  const stages = parseDockerfile(DOCKERFILE);

  test('the image as the issue describes it: two stages, non-root, /data volume, health check on /api/health', () => {
    assert.equal(stages.length, 2);
    const runtime = stages[1]!.steps;
    const one = (op: string) => runtime.filter((s) => s.op === op).map((s) => s.args);
    assert.deepEqual(one('USER'), ['node']);
    assert.deepEqual(one('VOLUME'), ['/data']);
    assert.deepEqual(one('EXPOSE'), ['3000']);
    const env = Object.assign({}, ...one('ENV').map(parseEnv)) as Record<string, string>;
    assert.equal(env.DATA_DIR, '/data');
    assert.equal(env.HOST, '0.0.0.0');
    assert.equal(env.PORT, '3000');
    assert.equal(env.NODE_ENV, 'production');
    const hc = one('HEALTHCHECK');
    assert.equal(hc.length, 1);
    assert.match(hc[0]!, /CMD \["node", "-e", ".*\/api\/health/);
    assert.match(one('RUN').join('\n'), /apt-get install -y --no-install-recommends git ca-certificates/);
    assert.match(DOCKERFILE, /LICENSE_KEY is required/);
  });

  test('every step runs; the CMD serves /api/health and the HEALTHCHECK command passes', async () => {
    const dirs = new Map<string, string>();
    let runtimeEnv: Record<string, string> = {};
    let cmd: string[] = [];
    let healthcheck: string[] = [];
    for (const stage of stages) {
      const root = join(work, stage.name);
      mkdirSync(root, { recursive: true });
      dirs.set(stage.name, root);
      let cwd = root;
      for (const { op, args } of stage.steps) {
        if (op === 'FROM') {
          assert.match(args, /^node:20-/, 'the image runs Node 20, as the checkout does');
        } else if (op === 'WORKDIR') {
          cwd = join(root, args);
          mkdirSync(cwd, { recursive: true });
        } else if (op === 'COPY') {
          const parts = args.split(/\s+/);
          const from = parts[0]!.startsWith('--from=') ? parts.shift()!.slice('--from='.length) : null;
          const dest = parts.pop()!;
          for (const src of parts) {
            const source = from ? join(dirs.get(from)!, src) : join(ROOT, src);
            assert.ok(existsSync(source), `COPY ${src}: missing`);
            const target = dest.endsWith('/') ? join(cwd, dest, src.split('/').pop()!) : join(cwd, dest);
            mkdirSync(dirname(target), { recursive: true });
            cpSync(source, target, { recursive: true });
          }
        } else if (op === 'RUN') {
          for (const step of args.split('&&').map((s) => s.trim())) mirrorRun(step, cwd);
        } else if (op === 'ENV') {
          runtimeEnv = { ...runtimeEnv, ...parseEnv(args) };
        } else if (op === 'CMD') {
          cmd = JSON.parse(args) as string[];
        } else if (op === 'HEALTHCHECK') {
          healthcheck = JSON.parse(args.slice(args.indexOf('CMD ') + 4)) as string[];
        } else {
          assert.ok(['VOLUME', 'EXPOSE', 'USER'].includes(op), `the Dockerfile uses ${op}, which this test does not mirror`);
        }
      }
    }
    const app = join(dirs.get(stages[1]!.name)!, 'app');
    assert.equal(existsSync(join(app, 'dist', 'server', 'main.js')), true, 'the runtime holds the compiled server');
    assert.equal(existsSync(join(app, 'core')), false, 'and no sources');
    assert.equal(existsSync(join(app, 'node_modules', 'typescript')), false, 'dev dependencies are left out');

    // The image's CMD, with its ENV (a free port and a temporary data directory here).
    const env = cliEnv(dataDir, { ...runtimeEnv, PORT: '0', DATA_DIR: dataDir, REFDESK_SHOW_RUNTIME: '1' });
    const child = spawn(cmd[0] === 'node' ? process.execPath : cmd[0]!, cmd.slice(1), { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start-up line in 120 s:\n${out}\n${err}`)), 120_000);
        const check = () => {
          const m = /Refdesk listening on port (\d+) \(http:\/\/0\.0\.0\.0:/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(Number(m[1]));
          }
        };
        child.stdout.on('data', check);
        child.once('exit', (code) => reject(new Error(`exited ${code}:\n${out}\n${err}`)));
      });
      assert.match(err + out, /dist/, 'bin/refdesk.js ran the compiled server');
      const health = await httpGet(`http://127.0.0.1:${port}/api/health`);
      assert.equal(health.status, 200);
      assert.deepEqual(health.body, { status: 'ok' });
      assert.equal((await httpGet(`http://127.0.0.1:${port}/api/ready`)).status, 200);
      const hc = spawnSync(healthcheck[0] === 'node' ? process.execPath : healthcheck[0]!, healthcheck.slice(1), { env: { ...env, PORT: String(port) }, encoding: 'utf8', timeout: 30_000 });
      assert.equal(hc.status, 0, `HEALTHCHECK failed: ${hc.stderr}`);
    } finally {
      await stopProcess(child);
    }
    // The same check against nothing listening fails, so it can tell.
    const down = spawnSync(process.execPath, healthcheck.slice(1), { env: { ...env, PORT: '1' }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(down.status, 1);
  });

  /** Runs (or checks) one RUN sub-command in `cwd`, the stage's working directory. */
  function mirrorRun(step: string, cwd: string): void {
    if (step === 'npm ci --no-audit --no-fund') {
      // All dependencies: what .ci/run installs with this very command.
      symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(cwd, 'node_modules'));
    } else if (step === 'npm ci --omit=dev --no-audit --no-fund') {
      const lock = JSON.parse(readFileSync(join(cwd, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; devOptional?: boolean }> };
      const target = join(cwd, 'node_modules');
      // Hard links: a copy without the space; removing a dev package here leaves the checkout's alone.
      const r = spawnSync('cp', ['-al', realpathSync(join(ROOT, 'node_modules')), target]);
      assert.equal(r.status, 0, String(r.stderr));
      for (const [path, meta] of Object.entries(lock.packages)) {
        if (path.startsWith('node_modules/') && (meta.dev || meta.devOptional)) rmSync(join(cwd, path), { recursive: true, force: true });
      }
    } else if (step === 'npm cache clean --force') {
      // Nothing cached here.
    } else if (step === 'npm run build') {
      const r = spawnSync(process.execPath, ['scripts/build.js'], { cwd, encoding: 'utf8', timeout: 600_000 });
      assert.equal(r.status, 0, `npm run build in the build stage:\n${r.stdout}\n${r.stderr}`);
    } else if (step === 'apt-get update' || step === 'rm -rf /var/lib/apt/lists/*') {
      // Package index housekeeping.
    } else if (/^apt-get install -y --no-install-recommends( [a-z0-9.+-]+)+$/.test(step)) {
      const pkgs = step.split(' ').slice(4);
      assert.deepEqual(pkgs.sort(), ['ca-certificates', 'git'], 'the runtime installs git and CA certificates, nothing else');
      assert.equal(spawnSync('git', ['--version']).status, 0, 'git is what the git source runs');
      assert.equal(existsSync('/etc/ssl/certs/ca-certificates.crt'), true, 'CA certificates for https sources');
    } else if (step === 'mkdir -p /data') {
      mkdirSync(dataDir, { recursive: true });
    } else if (step === 'chown node:node /data') {
      // The data directory belongs to the user the image runs as; here, to the test's user.
    } else {
      assert.fail(`the Dockerfile runs \`${step}\`, which test/e2e/dockerfile.test.ts does not mirror: mirror it there`);
    }
  }
});
