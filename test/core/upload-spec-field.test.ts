import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Kernel } from '../../core/kernel.ts';
import { rawUploadOf, uploadSpecField } from '../../core/uploads.ts';

// Which spec field names a raw upload comes from the source definitions, not from a list of kinds.
const dataDir = '/srv/refdesk-data';
const kernel = {
  env: { dataDir, mode: 'server' },
  sources: new Map<string, { def: Record<string, unknown> }>([
    ['files-kind', { def: { kind: 'files-kind', addPayload: 'files' } }],
    ['board', { def: { kind: 'board', specUpload: { specField: 'exportFile' } } }],
    ['plain', { def: { kind: 'plain' } }],
  ]),
} as unknown as Pick<Kernel, 'sources' | 'env'>;
const saved = join(dataDir, 'uploads', '6f1c7a8e-0d3b-4f6e-9a51-2c4b7d8e9f10.upload');

test('a files source names its raw upload in path, a spec-file upload in its declared field', () => {
  assert.equal(uploadSpecField(kernel, 'files-kind'), 'path');
  assert.equal(uploadSpecField(kernel, 'board'), 'exportFile');
  assert.equal(uploadSpecField(kernel, 'plain'), null);
  assert.equal(uploadSpecField(kernel, 'not-loaded'), null);
  assert.equal(rawUploadOf(kernel, { kind: 'files-kind', spec: { path: saved } }), saved);
  assert.equal(rawUploadOf(kernel, { kind: 'board', spec: { exportFile: saved } }), saved);
  assert.equal(rawUploadOf(kernel, { kind: 'board', spec: { path: saved } }), null, 'only the declared field');
});

test('a source that declares neither never has a raw upload, whatever its spec holds', () => {
  assert.equal(rawUploadOf(kernel, { kind: 'plain', spec: { path: saved } }), null);
  assert.equal(rawUploadOf(kernel, { kind: 'files-kind', spec: { path: '/home/me/docs' } }), null, 'outside the uploads folder');
});
