import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import type { Source, SourceContext, SourceDocument } from '../../../core/contracts.ts';

/** A fresh temp directory, removed when the test ends. */
export async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'refdesk-upload-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes files under root; keys are relative paths with forward slashes. */
export async function writeTree(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [rel, data] of Object.entries(files)) {
    const p = join(root, ...rel.split('/'));
    await mkdir(dirname(p), { recursive: true });
    await writeFile(p, data);
  }
}

export { rejectsWith } from '../../helpers/rejects-with.ts';

/** Reads a source by hand: what it yielded before failing, and the failure. */
export async function drain(source: Source, spec: Record<string, unknown>, signal?: AbortSignal): Promise<{ docs: SourceDocument[]; error: unknown }> {
  const ctx: SourceContext = {
    libraryId: '/docs/test',
    version: '',
    spec,
    signal: signal ?? new AbortController().signal,
    previous: new Map(),
    log() {},
    progress() {},
  };
  const docs: SourceDocument[] = [];
  try {
    for await (const d of source.read(ctx)) docs.push(d);
  } catch (error) {
    return { docs, error };
  }
  return { docs, error: null };
}
