/**
 * `refdesk add` on a store with a shared job queue (the PostgreSQL store, issue 24). The job the
 * command queues is the cluster's: a running `refdesk serve` node may claim it before the command
 * does. So the command leaves it to the cluster and follows it through the store to its end,
 * printing what it prints when it runs the job itself (progress, warnings, the summary line);
 * only when no node has claimed it within `leaseMs` (no node is running) does the command claim
 * and run it itself. A local folder or file is packed and added as an upload (core/uploads.ts: the
 * store keeps it), so whichever node runs the job reads the same documents.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JobQueue, JobRecord } from '../core/contracts.ts';
import type { Kernel } from '../core/kernel.ts';
import { runIngestJob, type AddLibraryInput } from '../core/ingest.ts';
import { uploadsDir } from '../core/uploads.ts';
import { showJobUpdate, type JobUpdateOutput } from './cli-output.ts';
import { packForUpload } from './pack.ts';

/** The add of a local path as an upload: the path packed (pack.ts) into this node's uploads folder. */
export async function packedUpload(kernel: Kernel, input: AddLibraryInput): Promise<{ input: AddLibraryInput; packed: string }> {
  const dir = uploadsDir(kernel.env.dataDir);
  await mkdir(dir, { recursive: true });
  const packed = join(dir, `${randomUUID()}.upload`);
  await writeFile(packed, await packForUpload(String(input.spec.path), (p, reason) => process.stderr.write(`Skipped ${p}: ${reason}\n`)));
  return { input: { ...input, spec: { ...input.spec, path: packed } }, packed };
}

/**
 * Runs a queued job on the cluster: follows it while a node runs it, and runs it here when it is
 * still queued after `leaseMs` (or queued again: its node died, its lease expired, and no other
 * node took it; this command sweeps expired leases too). Resolves with the job once it has ended.
 */
export async function runOnCluster(kernel: Kernel, queue: JobQueue, jobId: string, output: JobUpdateOutput): Promise<JobRecord> {
  const { leaseMs, pollMs } = queue.leaseTiming();
  const seen = { seq: -Infinity };
  let wake: () => void = () => {};
  const unwatch = queue.watchJobs((id) => id === jobId && wake());
  let queuedSince = Date.now();
  let told = '';
  const tell = (what: string, line: string) => {
    if (told !== what) process.stderr.write(`${line}\n`);
    told = what;
  };
  try {
    for (;;) {
      const job = await kernel.store.getJob(jobId);
      if (!job) throw new Error(`Job ${jobId} is gone (its library was deleted).`);
      if (job.state !== 'queued' && job.state !== 'running') return job;
      if (job.state === 'running') {
        tell('running', `Job ${jobId} runs on a Refdesk node; following it.`);
        queuedSince = Date.now();
        showJobUpdate(output, seen, job, await kernel.store.getJobLog(jobId), { job: jobId, library: job.libraryId });
        // Its node may have died with no other node left to sweep: the lease then expires here too.
        await queue.sweepExpiredLeases().catch(() => 0);
      } else if (Date.now() - queuedSince >= leaseMs) {
        tell('here', `No Refdesk node claimed job ${jobId} within ${Math.round(leaseMs / 1000)} s; running it here.`);
        const done = await runIngestJob(kernel, jobId, { onProgress: (p) => output.progress(p) });
        // Claimed by a node at the last moment: follow it.
        if (done.state !== 'queued' && done.state !== 'running') return done;
        continue;
      } else {
        tell('queued', `Job ${jobId} is queued for the Refdesk nodes on this database (this command runs it if none claims it within ${Math.round(leaseMs / 1000)} s).`);
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, pollMs).unref();
      });
    }
  } finally {
    unwatch();
  }
}
