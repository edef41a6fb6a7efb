/**
 * `refdesk add --source <kind> --spec '<json>'` (issue 23 item 4) as real processes: a custom
 * source plugin (test/fixtures/custom-source) named by a config file, added directly (no server)
 * and through a running server (the admin add route), its ID derived from its first string field,
 * then answered by `refdesk context`. Bad specs fail with the validator's message naming the field.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runRefdesk, startServer } from './refdesk-process.ts';
import { processDataDirs } from '../helpers/process-data-dirs.ts';

const newDir = processDataDirs('refdesk-cli-spec-');

function configIn(dir: string): string {
  const file = join(dir, 'notes.yaml');
  writeFileSync(
    file,
    [
      'plugins:',
      '  - use: store-embedded',
      '  - use: chunker-markdown',
      '  - use: source-upload',
      `  - use: ${join(ROOT, 'test/fixtures/custom-source/notes-source.ts')}`,
      '    options:',
      '      notes:',
      '        greeting: Howdy',
      '',
    ].join('\n'),
  );
  return file;
}

test('refdesk add --source notes --spec: direct, then through a running server; bad specs name the field', { timeout: 180_000 }, async () => {
  const dir = newDir();
  const env = { REFDESK_CONFIG: configIn(dir) };
  const data = join(dir, 'data');

  let r = await runRefdesk(['add', '--source', 'notes', '--spec', JSON.stringify({ project: 'Field Guide', topics: ['compass bearings'] })], data, 90_000, env);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^\/notes\/field-guide: 1 files, \d+ snippets/m);
  r = await runRefdesk(['context', '/notes/field-guide', 'compass bearings'], data, 60_000, env);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Howdy from the Field Guide notes: the compass bearings page explains `compass_bearings\(\)`/);

  r = await runRefdesk(['add', '--source', 'notes', '--spec', '{"project": "Broken", "topics": "x"}'], data, 60_000, env);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /spec\.topics: must be array/);
  r = await runRefdesk(['add', '--source', 'notes', '--spec', '{not json'], data, 60_000, env);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /add --spec: not valid JSON/);
  r = await runRefdesk(['add', '--spec', '{}'], data, 60_000, env);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /name the source kind with --source <kind>/);

  const server = await startServer(data, 60_000, env);
  try {
    const specFile = join(dir, 'spec.json');
    writeFileSync(specFile, JSON.stringify({ project: 'Star Charts', topics: ['polar alignment'], token: 'cli-secret-token-4411' }));
    r = await runRefdesk(['add', '--source', 'notes', '--spec', `@${specFile}`], data, 90_000, env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\/notes\/star-charts: 1 files, \d+ snippets \(finalized\)/m);
    assert.ok(!r.stderr.includes('cli-secret-token-4411') && !r.stdout.includes('cli-secret-token-4411'));
    const ctx = await fetch(`${server.base}/api/v2/context?${new URLSearchParams({ libraryId: '/notes/star-charts', query: 'polar alignment' })}`);
    assert.equal(ctx.status, 200);
    assert.match(await ctx.text(), /Howdy from the Star Charts notes/);
  } finally {
    await server.stop();
  }
});
