/**
 * core/worker-task.ts: which module a worker thread starts from. From the sources a worker is
 * the `.ts` module (through tsx) unless REFDESK_RUNTIME=dist says the build is current and the
 * compiled twin (dist/<path>.js) is there; `compiled: false` keeps the source module.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compiledTwin, workerUrl } from '../../core/worker-task.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CALLER = pathToFileURL(join(ROOT, 'core', 'caller.ts')).href;
const PROBE_TWIN = join(ROOT, 'dist', 'core', '__worker-task-probe__.js');
const created: string[] = [];

function withRuntime<T>(value: string | undefined, f: () => T): T {
  const before = process.env.REFDESK_RUNTIME;
  if (value === undefined) delete process.env.REFDESK_RUNTIME;
  else process.env.REFDESK_RUNTIME = value;
  try {
    return f();
  } finally {
    if (before === undefined) delete process.env.REFDESK_RUNTIME;
    else process.env.REFDESK_RUNTIME = before;
  }
}

after(() => {
  for (const p of created.reverse()) rmSync(p, { recursive: true, force: true });
});

test('a source worker starts from its compiled twin only under REFDESK_RUNTIME=dist, when the twin exists', () => {
  // The twin is a file of its own, made here and removed after (the rest of dist/ is untouched).
  for (let d = dirname(PROBE_TWIN); !existsSync(d); d = dirname(d)) created.push(d);
  mkdirSync(dirname(PROBE_TWIN), { recursive: true });
  writeFileSync(PROBE_TWIN, '');
  created.push(PROBE_TWIN);
  const source = join(ROOT, 'core', '__worker-task-probe__.ts');

  assert.equal(withRuntime(undefined, () => fileURLToPath(workerUrl(CALLER, './__worker-task-probe__'))), source);
  assert.equal(withRuntime('tsx', () => fileURLToPath(workerUrl(CALLER, './__worker-task-probe__'))), source);
  assert.equal(withRuntime('dist', () => fileURLToPath(workerUrl(CALLER, './__worker-task-probe__'))), PROBE_TWIN);
  assert.equal(withRuntime('dist', () => fileURLToPath(workerUrl(CALLER, './__worker-task-probe__', { compiled: false }))), source);
  // No twin: the source module, whatever the variable says.
  assert.equal(withRuntime('dist', () => fileURLToPath(workerUrl(CALLER, './__no-such-worker__'))), join(ROOT, 'core', '__no-such-worker__.ts'));
  // A module outside the checkout, or compiled already, has no twin.
  assert.equal(withRuntime('dist', () => compiledTwin(new URL('file:///elsewhere/core/x.ts'))), null);
  assert.equal(withRuntime('dist', () => compiledTwin(pathToFileURL(PROBE_TWIN))), null);
  // A compiled caller names its .js neighbour.
  assert.equal(fileURLToPath(workerUrl(pathToFileURL(join(ROOT, 'dist', 'core', 'caller.js')).href, './chunk-thread')), join(ROOT, 'dist', 'core', 'chunk-thread.js'));
});
