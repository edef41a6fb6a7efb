/**
 * Child process for the crash-recovery test (not a test itself):
 *   node --import tsx test/plugins/store-embedded/crash-writer.ts <dataDir>
 * Finalizes build A, stages build B under a running job, flushes, then dies without close().
 */
import { makeStore } from './helpers.ts';
import { sampleSnippet } from '../../../core/testing/store-contract.ts';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: crash-writer.ts <dataDir>');

const store = makeStore(dataDir, 'server', { flushIntervalMs: 60_000 }, { port: 4999 });
await store.open();
await store.upsertLibrary({ id: '/docs/crash', title: 'Crash', source: { kind: 'upload', spec: {} } });
await store.upsertLibrary({ id: '/docs/never', title: 'Never built', source: { kind: 'upload', spec: {} } });

const jobA = await store.createJob({ libraryId: '/docs/crash', version: '', kind: 'upload' });
await store.updateJob(jobA.id, { state: 'running' });
const buildA = await store.beginBuild('/docs/crash', '', jobA.id);
await store.addSnippets(buildA, [sampleSnippet({ content: 'alpha one' }), sampleSnippet({ content: 'alpha two' })]);
await store.finalizeBuild(buildA);
await store.updateJob(jobA.id, { state: 'succeeded' });

const jobB = await store.createJob({ libraryId: '/docs/crash', version: '', kind: 'upload' });
await store.updateJob(jobB.id, { state: 'running' });
const buildB = await store.beginBuild('/docs/crash', '', jobB.id);
await store.addSnippets(buildB, [sampleSnippet({ content: 'beta one' }), sampleSnippet({ content: 'beta two' }), sampleSnippet({ content: 'beta three' })]);
await store.appendJobLog(jobB.id, 'info', 'read 3 snippets');
const jobNever = await store.createJob({ libraryId: '/docs/never', version: '', kind: 'upload' });
await store.flush();

process.stdout.write(JSON.stringify({ buildA, buildB, jobA: jobA.id, jobB: jobB.id, jobNever: jobNever.id, pid: process.pid }) + '\n');
process.exit(137); // no close(): the lock file and the staged build stay behind
