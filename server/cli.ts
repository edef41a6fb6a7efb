/**
 * The `refdesk` command. Every command reads PORT, DATA_DIR and REFDESK_CONFIG as the server does.
 *
 * Writers and the data directory: sql.js keeps the database in memory, so two processes writing
 * the same DATA_DIR would lose data. The store takes a lock file (DATA_DIR/refdesk.lock). `add`
 * takes it when no server runs; when a server holds it, `add` sends the documents to that
 * server's admin API instead. Read commands (libraries, search, context) open the database
 * read-only and never take the lock.
 */
import { adminAuthHeaders } from './auth/local-files.ts';
import { parseArgs } from 'node:util';
import { stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
// Only light modules are imported up front: the kernel, the store and the server are imported by
// the commands that use them, so `refdesk --help` starts in a fraction of the time.
import type { Kernel } from '../core/kernel.ts';
import { createConsoleLogger, loggerFrom } from '../core/services.ts';
import type { Logger, LogLevel } from '../core/contracts.ts';
import { StatusLine, WarningSummary, showJobUpdate } from './cli-output.ts';
import { RefdeskError } from '../core/errors.ts';
import { slugifyLibraryName } from '../core/library-id.ts';
import type { RuntimeEnv } from '../core/contracts.ts';
import type { ProcessSettings } from './env.ts';
import { describeStartupError } from './startup-error.ts';
import { configSources, declaredAddFlags, resolveAddTarget, type AddTarget, type CliSource } from './add-target.ts';
import { prepareDataDir, readDataLock } from '../core/data-lock.ts';

const USAGE = `Usage: refdesk <command> [options]

Commands:
  serve                                  start the HTTP server (PORT, DATA_DIR)
  add <target> [--name N] [--id ID] [--source <kind>] [--title T] [--description D] [flags]
                                         index a folder, a file, a .zip/.tar.gz, a URL or
                                         <prefix>:<name>; the forms, flags and secret variables
                                         come from the config's sources: refdesk add --help
  add --source <kind> --spec '<json>'|@spec.json [--id ID] [--title T]
                                         any source of the config (GET /api/sources) by its spec
  libraries                              list the libraries in DATA_DIR
  search <name> <query>                  find libraries by name (and question)
  context <libraryId> <query> [--json] [--tokens N] [--fast]
                                         the documentation snippets that answer a question
                                         (reranked by the LLM of Settings unless --fast)
  jobs [libraryId]                       recent ingest jobs with their state
  keys create [--name N] [--plan P] [--role member|admin]
                                         create an API key (shown once; stored hashed)
  keys list                              list API keys (id, prefix, plan, role, state)
  keys revoke <id>                       revoke an API key
  rename <oldId> <newId>                 rename a library; the old ID answers 301
  delete <libraryId>                     delete a library (every version, build, snippet, job and
                                         upload); a pinned ID (/owner/repo/v1) deletes that version
  settings [set mcp.requireKey true|false]
                                         show or change server settings (require a key on /mcp)
  account reset                          the admin account back to admin / refdesk (forced change),
                                         every session ended (lost password)
  backup --out FILE [--include-secret-key]
                                         a consistent .tar.gz of DATA_DIR (through the running
                                         server, else directly); the sealing key only when asked
  restore --from FILE [--force]          unpack a backup into an empty DATA_DIR (--force: replace)
  demo                                   index Refdesk's own docs as /docs/refdesk, then serve
                                         (on 127.0.0.1 with a throwaway local licence unless LICENSE_KEY is set)
  license keygen|issue|show|serve-issuer|trial
                                         licence keys: refdesk license --help (docs/licence.md)
  mcp [--transport stdio|http] [--port N] [--server URL] [--api-key KEY]
                                         Refdesk's MCP server for AI clients (refdesk mcp --help)
  db migrate | db status [--json]        the PostgreSQL store's schema on DATABASE_URL (docs/scale-out.md)
  migrate-store --from A --to B [--force]
                                         move a deployment between a DATA_DIR and a DATABASE_URL
                                         (either way), secrets re-sealed (docs/scale-out.md)

Environment: LICENSE_KEY (required by serve), LICENSE_ISSUER_KEYS, PORT (3000), HOST (127.0.0.1),
  DATA_DIR (./data), REFDESK_CONFIG (config/default.yaml),
  LOG_LEVEL (warn for the CLI), LOG_FORMAT (text on a terminal, json otherwise).
`;

/**
 * The CLI's logger: warnings and errors unless LOG_LEVEL says otherwise. With LOG_FORMAT text
 * (the default on a terminal) short readable lines, printed above the progress line when there
 * is one; JSON lines otherwise. `summary` also collects the warnings for the end of an ingest.
 */
function cliLogger(settings: ProcessSettings, status?: StatusLine, summary?: WarningSummary): Logger {
  const text = settings.logFormat === 'text';
  const sink = status ? (line: string) => status.print(line, text) : undefined;
  const base = createConsoleLogger(process.env.LOG_LEVEL ? settings.logLevel : 'warn', sink, { format: settings.logFormat, omitFields: ['job', 'library'] });
  if (!summary) return base;
  const log = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    summary.add(level, message);
    base.log(level, message, fields);
  };
  return loggerFrom(log);
}

async function openKernel(settings: ProcessSettings, mode: RuntimeEnv['mode'], logger: Logger = cliLogger(settings)): Promise<Kernel> {
  const { createKernel } = await import('../core/kernel.ts');
  if (mode === 'writer') await prepareDataDir(settings.dataDir);
  const kernel = await createKernel(settings.configFile, { env: { dataDir: settings.dataDir, mode }, logger });
  await kernel.open();
  return kernel;
}

/** What an ingest prints on stderr while it runs: progress, warnings above it, a summary at the end. */
function ingestOutput(settings: ProcessSettings) {
  const status = new StatusLine(process.stderr);
  const summary = new WarningSummary();
  return {
    status,
    summary,
    logger: cliLogger(settings, status, summary),
    progress(p: { files: number; snippets: number; elapsedMs: number }) {
      status.update(`  ${p.files} files, ${p.snippets} snippets, ${(p.elapsedMs / 1000).toFixed(1)} s`);
    },
    /** Ends the progress line; on the text format, sums up the warnings. */
    finish() {
      status.done();
      if (settings.logFormat === 'text') for (const line of summary.lines()) process.stderr.write(line + '\n');
    },
  };
}

/**
 * `refdesk add`: what the target means comes from the config's sources (their URL matches and
 * CLI forms: prefixes, local paths, flags and environment variables, SourceDefinition.cliTarget).
 */
async function cmdAdd(settings: ProcessSettings, positionals: string[], values: Record<string, unknown>, sources?: readonly CliSource[]): Promise<number> {
  const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const t = resolveAddTarget(positionals[0] ?? '', {
    sources: sources ?? (await configSources(settings.configFile)),
    source: str('source'),
    name: str('name'),
    id: str('id'),
    flags: Object.fromEntries(Object.keys(values).map((k) => [k, str(k)])),
    spec: str('spec'),
    env: process.env,
  });
  const title = str('title');
  const description = str('description');

  const lock = await readDataLock(settings.dataDir);
  if (lock && lock.mode === 'server' && lock.port) {
    const what = t.files ? 'the documents' : 'the request';
    process.stderr.write(`A Refdesk server (pid ${lock.pid}) is using ${settings.dataDir}; sending ${what} to it on port ${lock.port}.\n`);
    if (t.files) return addThroughServer(settings, lock.port, String(t.spec.path), t.name!, title, description);
    return addSourceThroughServer(settings, lock.port, t, title, description);
  }

  // This process runs the ingest and exits: V8 optimizes only the code that stays hot (cli-v8.ts).
  (await import('./cli-v8.ts')).tuneV8ForAdd();
  const { addLibrary, runIngestJob } = await import('../core/ingest.ts');
  const output = ingestOutput(settings);
  const kernel = await openKernel(settings, 'writer', output.logger);
  let packed: string | null = null;
  try {
    const { withDerivedId } = await import('./api/derive-id.ts');
    const { sharedJobQueue } = await import('./job-runner.ts');
    const { packedUpload, runOnCluster } = await import('./cli-shared-queue.ts');
    const queue = sharedJobQueue(kernel.store);
    let input = withDerivedId(kernel, { ...t, title, description });
    // A shared queue (PostgreSQL): any node may run the job, so local files go in as an upload.
    if (queue && t.files) ({ input, packed } = await packedUpload(kernel, input));
    const { library, job } = await addLibrary(kernel, input);
    process.stderr.write(`Indexing ${t.files ? String(t.spec.path) : (positionals[0] ?? `the ${t.source} spec`)} as ${library.id}\n`);
    const done = queue ? await runOnCluster(kernel, queue, job.id, output) : await runIngestJob(kernel, job.id, { onProgress: (p) => output.progress(p) });
    output.finish();
    if (done.state !== 'succeeded') {
      process.stderr.write(`refdesk: ${done.error?.message ?? 'ingest failed'}\n`);
      return 1;
    }
    const lib = await kernel.store.getLibrary(library.id);
    process.stdout.write(
      `${library.id}: ${done.progress.files} files, ${lib?.totalSnippets} snippets, ${lib?.totalTokens} tokens (${lib?.state})\n`,
    );
    return 0;
  } finally {
    if (packed) await import('node:fs/promises').then((fs) => fs.rm(packed!, { force: true }));
    await kernel.close();
  }
}

/** Polls a job on the server, printing its progress and its new warnings, until it ends. */
async function followJob(settings: ProcessSettings, base: string, jobId: string, libraryName: string): Promise<number> {
  const output = ingestOutput(settings);
  const seen = { seq: -Infinity };
  let failures = 0;
  for (;;) {
    await new Promise((r) => setTimeout(r, 300));
    type JobAnswer = {
      job: { state: string; progress: { files?: number; snippets?: number }; error: { message: string } | null; startedAt: string | null };
      log?: Array<{ seq: number; level: LogLevel; message: string }>;
    };
    let answer: JobAnswer;
    let jr: Response;
    try {
      // A busy server may drop a kept-alive connection under a poll: asking again is harmless.
      jr = await fetch(`${base}/api/admin/jobs/${jobId}`, { headers: await adminAuthHeaders(settings.dataDir), signal: AbortSignal.timeout(30_000) });
      if (jr.status >= 500) throw new Error(`HTTP ${jr.status}`);
      if (jr.ok) answer = (await jr.json()) as JobAnswer;
      failures = 0;
    } catch (e) {
      if (++failures < 10) continue;
      output.finish();
      const why = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
      throw new RefdeskError('internal_error', `Lost the server at ${base} while following job ${jobId} (${why}); the ingest may still be running: see refdesk jobs.`);
    }
    if (!jr.ok) {
      output.finish();
      const body = (await jr.json().catch(() => ({}))) as { message?: string };
      throw new RefdeskError('internal_error', `The server at ${base} refused to show job ${jobId}: ${body.message ?? `HTTP ${jr.status}`}`);
    }
    const { job, log } = answer!;
    showJobUpdate(output, seen, job, log ?? [], { job: jobId, library: libraryName });
    if (job.state === 'succeeded') {
      output.finish();
      process.stdout.write(`${libraryName}: ${job.progress.files} files, ${job.progress.snippets} snippets (finalized)\n`);
      return 0;
    }
    if (job.state === 'failed' || job.state === 'interrupted') {
      output.finish();
      process.stderr.write(`refdesk: ${job.error?.message ?? 'ingest failed'}\n`);
      return 1;
    }
  }
}

/** Sends an add request to a running server's admin route, then follows its job. */
async function addThroughAdminRoute(settings: ProcessSettings, port: number, route: string, init: RequestInit): Promise<number> {
  const base = `http://127.0.0.1:${port}`;
  const res = await fetch(`${base}/api/admin/${route}`, { method: 'POST', ...init, headers: { ...(init.headers as Record<string, string>), ...(await adminAuthHeaders(settings.dataDir)) } });
  const json = (await res.json()) as { libraryName?: string; jobId?: string; message?: string };
  if (!res.ok) {
    process.stderr.write(`refdesk: ${json.message ?? res.statusText}\n`);
    return 1;
  }
  process.stderr.write(`${json.message}\n`);
  return followJob(settings, base, json.jobId!, json.libraryName!);
}

function addSourceThroughServer(settings: ProcessSettings, port: number, t: AddTarget, title?: string, description?: string): Promise<number> {
  const body = { source: t.source, spec: t.spec, ...(t.id ? { id: t.id } : {}), ...(title ? { title } : {}), ...(description ? { description } : {}) };
  return addThroughAdminRoute(settings, port, 'add', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

async function addThroughServer(settings: ProcessSettings, port: number, path: string, name: string, title?: string, description?: string): Promise<number> {
  const { packForUpload } = await import('./pack.ts');
  const body = new Blob([new Uint8Array(await packForUpload(path, (p, reason) => process.stderr.write(`Skipped ${p}: ${reason}\n`)))]);
  const qs = new URLSearchParams({ name, ...(title ? { title } : {}), ...(description ? { description } : {}) });
  return addThroughAdminRoute(settings, port, `upload?${qs}`, { body, headers: { 'content-type': 'application/octet-stream' } });
}

async function cmdLibraries(settings: ProcessSettings): Promise<number> {
  const kernel = await openKernel(settings, 'reader');
  try {
    const libs = await kernel.store.listLibraries();
    if (libs.length === 0) {
      process.stdout.write(`No libraries in ${settings.dataDir}. Add one: refdesk add ./docs --name mydocs\n`);
      return 0;
    }
    for (const l of libs) {
      process.stdout.write(`${l.id}\t${l.state}\t${l.totalSnippets} snippets\t${l.totalTokens} tokens\t${l.lastUpdateDate ?? '-'}${l.versions.length ? `\tversions: ${l.versions.join(', ')}` : ''}\n`);
    }
    return 0;
  } finally {
    await kernel.close();
  }
}

async function cmdSearch(settings: ProcessSettings, positionals: string[]): Promise<number> {
  const [name, ...rest] = positionals;
  if (!name) throw new RefdeskError('invalid_request', 'search: give a library name.');
  const { searchLibraries } = await import('../core/library-search.ts');
  const kernel = await openKernel(settings, 'reader');
  try {
    const libs = (await searchLibraries(kernel, name, rest.join(' ') || name)).map((s) => s.library);
    if (libs.length === 0) process.stdout.write(`No library matches "${name}".\n`);
    for (const l of libs) process.stdout.write(`${l.id}\t${l.title}\t${l.totalSnippets} snippets\t${l.description}\n`);
    return 0;
  } finally {
    await kernel.close();
  }
}

async function cmdContext(settings: ProcessSettings, positionals: string[], values: Record<string, unknown>): Promise<number> {
  const [libraryId, ...rest] = positionals;
  const query = rest.join(' ');
  if (!libraryId || !query) throw new RefdeskError('invalid_request', 'context: give a library ID and a question, e.g. refdesk context /docs/koa "how do I set a cookie"');
  let tokens: number | undefined;
  if (values.tokens !== undefined) {
    if (!/^\d+$/.test(String(values.tokens))) throw new RefdeskError('invalid_request', '--tokens must be a positive integer.');
    tokens = Number(values.tokens);
  }
  const { getContext, toContextJson, toContextText } = await import('../core/query.ts');
  const kernel = await openKernel(settings, 'reader');
  try {
    const result = await getContext(kernel, { libraryId, query, tokens }, { fast: values.fast === true });
    process.stdout.write(values.json ? JSON.stringify(toContextJson(result), null, 2) + '\n' : toContextText(result) + '\n');
    return 0;
  } finally {
    await kernel.close();
  }
}

async function cmdJobs(settings: ProcessSettings, positionals: string[]): Promise<number> {
  const kernel = await openKernel(settings, 'reader');
  try {
    const jobs = await kernel.store.listJobs({ libraryId: positionals[0], limit: 20 });
    if (jobs.length === 0) process.stdout.write('No jobs.\n');
    for (const j of jobs) {
      const what = `${j.progress.files ?? 0} files, ${j.progress.snippets ?? 0} snippets`;
      process.stdout.write(`${j.id}\t${j.libraryId}${j.version ? '@' + j.version : ''}\t${j.state}\t${what}\t${j.createdAt}${j.error ? '\t' + j.error.message : ''}\n`);
    }
    return 0;
  } finally {
    await kernel.close();
  }
}

/**
 * Deletes a library, or one version of it with a pinned ID: through the running server's admin
 * route when a server holds the data directory, else directly (taking the writer lock).
 */
async function cmdDelete(settings: ProcessSettings, positionals: string[]): Promise<number> {
  const [libraryId, ...extra] = positionals;
  if (!libraryId || extra.length > 0) throw new RefdeskError('invalid_request', 'delete: give one library ID, e.g. refdesk delete /docs/mylib (or /docs/mylib/v1 for one version).');
  const lock = await readDataLock(settings.dataDir);
  if (lock && lock.mode === 'server' && lock.port) {
    const path = libraryId.split('/').filter(Boolean).map(encodeURIComponent).join('/');
    const res = await fetch(`http://127.0.0.1:${lock.port}/api/admin/libraries/${path}`, { method: 'DELETE', headers: await adminAuthHeaders(settings.dataDir) });
    const json = (await res.json().catch(() => ({}))) as { message?: string };
    if (!res.ok) {
      process.stderr.write(`refdesk: ${json.message ?? res.statusText}\n`);
      return 1;
    }
    process.stdout.write(`${json.message}\n`);
    return 0;
  }
  const { deleteLibrary } = await import('./api/service.ts');
  const kernel = await openKernel(settings, 'writer');
  try {
    process.stdout.write(`${(await deleteLibrary(kernel, libraryId)).message}\n`);
    return 0;
  } finally {
    await kernel.close();
  }
}

/**
 * `refdesk backup --out FILE [--include-secret-key]`: through the running server's admin route
 * when a server holds the data directory (it keeps serving), else directly under the data lock.
 */
async function cmdBackup(settings: ProcessSettings, positionals: string[], values: Record<string, unknown>): Promise<number> {
  const out = typeof values.out === 'string' && values.out !== '' ? resolve(values.out) : null;
  if (!out || positionals.length > 0) throw new RefdeskError('invalid_request', 'backup: give the file to write, e.g. refdesk backup --out refdesk-backup.tar.gz [--include-secret-key].');
  if (existsSync(out) && !values.force) throw new RefdeskError('invalid_request', `backup: ${out} exists; choose another file or add --force to replace it.`);
  const includeSecretKey = values['include-secret-key'] === true;
  const { createBackup, secretKeyAdvice } = await import('./backup.ts');
  const { rename, rm, copyFile, stat: statFile } = await import('node:fs/promises');
  const tmp = `${out}.${process.pid}.partial`;
  const lock = await readDataLock(settings.dataDir);
  try {
    if (lock && lock.mode === 'server' && lock.port) {
      process.stderr.write(`A Refdesk server (pid ${lock.pid}) is using ${settings.dataDir}; taking the backup through it on port ${lock.port}.\n`);
      const res = await fetch(`http://127.0.0.1:${lock.port}/api/admin/backup?includeSecretKey=${includeSecretKey}`, { headers: await adminAuthHeaders(settings.dataDir) });
      if (!res.ok || !res.body) {
        const json = (await res.json().catch(() => ({}))) as { message?: string };
        process.stderr.write(`refdesk: backup failed: ${json.message ?? res.statusText}\n`);
        return 1;
      }
      const { createWriteStream } = await import('node:fs');
      const { pipeline } = await import('node:stream/promises');
      const { Readable } = await import('node:stream');
      await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), createWriteStream(tmp, { mode: 0o600 }));
    } else {
      const kernel = await openKernel(settings, 'writer');
      try {
        const backup = await createBackup(kernel, { includeSecretKey });
        try {
          await copyFile(backup.file, tmp);
        } finally {
          await backup.cleanup();
        }
      } finally {
        await kernel.close();
      }
    }
    await rename(tmp, out);
  } finally {
    await rm(tmp, { force: true });
  }
  process.stdout.write(`Backup written to ${out} (${(await statFile(out)).size} bytes).\n${secretKeyAdvice(settings.dataDir, includeSecretKey, process.env)}\n`);
  return 0;
}

/** `refdesk restore --from FILE [--force]`: into an empty DATA_DIR (no process may hold it). */
async function cmdRestore(settings: ProcessSettings, positionals: string[], values: Record<string, unknown>): Promise<number> {
  const from = typeof values.from === 'string' && values.from !== '' ? values.from : null;
  if (!from || positionals.length > 0) throw new RefdeskError('invalid_request', 'restore: give the backup to restore, e.g. refdesk restore --from refdesk-backup.tar.gz [--force].');
  const { restoreBackup, relocateUploads } = await import('./backup.ts');
  const { manifest, secretKeyPresent } = await restoreBackup(from, settings.dataDir, { force: values.force === true });
  // Open it once: checks the database and queues again the jobs that were running at backup time.
  const kernel = await openKernel(settings, 'writer');
  let libraries = 0;
  try {
    await relocateUploads(kernel, manifest.dataDir);
    libraries = (await kernel.store.listLibraries()).length;
  } finally {
    await kernel.close();
  }
  process.stdout.write(`Restored ${manifest.files.length} files (${libraries} libraries, backup of ${manifest.createdAt}) into ${settings.dataDir}.\n`);
  if (!secretKeyPresent && !process.env.REFDESK_SECRET_KEY && !process.env.ENCRYPTION_KEY) {
    process.stdout.write(`The backup holds no sealing key: copy the secret.key you kept to ${join(settings.dataDir, 'secret.key')} (mode 0600), or set REFDESK_SECRET_KEY, before starting; stored tokens cannot be opened without it.\n`);
  }
  return 0;
}

async function cmdDemo(settings: ProcessSettings): Promise<number> {
  // server/cli.ts in a checkout, dist/server/cli.js when compiled: docs/ is at the package root.
  const here = dirname(new URL(import.meta.url).pathname);
  const docs = [join(here, '..', 'docs'), join(here, '..', '..', 'docs')].find((d) => existsSync(join(d, 'http-api.md'))) ?? join(here, '..', 'docs');
  const lock = await readDataLock(settings.dataDir);
  if (lock) throw new RefdeskError('store_locked', `A Refdesk process (pid ${lock.pid}) already uses ${settings.dataDir}: stop it first, or set DATA_DIR to another directory.`);
  if (!process.env.LICENSE_KEY?.trim()) await (await import('./licence-demo.ts')).useDemoLicence(settings, process.env);
  const code = await cmdAdd(settings, [docs], { name: 'refdesk', title: 'Refdesk', description: "Refdesk's own documentation" });
  if (code !== 0) return code;
  process.stdout.write(
    `\nTry it:\n  curl 'http://127.0.0.1:${settings.port}/api/v2/context?libraryId=/docs/refdesk&query=how+do+I+add+a+library'\n\n`,
  );
  await import('./main.ts');
  return -1; // keep running
}

/** Runs one command; its exit code (-1: keeps running). A failure is printed as one line, without a stack. */
export async function runCli(argv: string[]): Promise<number> {
  try {
    return await dispatch(argv);
  } catch (e) {
    const env = process.env;
    process.stderr.write(`refdesk: ${describeStartupError(e, { port: Number(env.PORT ?? 3000), host: env.HOST?.trim() || (await import('./env.ts')).DEFAULT_HOST })}\n`);
    if (env.LOG_LEVEL === 'debug' && e instanceof Error && e.stack) process.stderr.write(e.stack + '\n');
    return 1;
  }
}

async function dispatch(argv: string[]): Promise<number> {
  // `mcp` has its own options (server/mcp/command.ts).
  if (argv[0] === 'mcp') return (await import('./mcp/command.ts')).runMcpCommand(argv.slice(1), (await import('./env.ts')).readSettings(), process.env);
  if (argv[0] === 'license' || argv[0] === 'licence') return (await import('./licence-cli.ts')).runLicenceCommand(argv.slice(1), process.env);
  if (argv[0] === 'db') return (await import('./cli-db.ts')).runDbCommand(argv.slice(1), process.env);
  if (argv[0] === 'migrate-store') return (await import('./cli-migrate-store.ts')).runMigrateStoreCommand(argv.slice(1), process.env);
  const options = {
    name: { type: 'string' },
    id: { type: 'string' },
    source: { type: 'string' },
    spec: { type: 'string' },
    title: { type: 'string' },
    description: { type: 'string' },
    json: { type: 'boolean' },
    tokens: { type: 'string' },
    fast: { type: 'boolean' },
    plan: { type: 'string' },
    role: { type: 'string' },
    out: { type: 'string' },
    from: { type: 'string' },
    'include-secret-key': { type: 'boolean' },
    force: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  } as const;
  // `refdesk add`: the flags the config's sources declare (cliTarget fields, e.g. git's --branch) are options too.
  const addCommand = !argv.some((a) => a === '--help' || a === '-h') && parseArgs({ args: argv, allowPositionals: true, strict: false, options }).positionals[0] === 'add';
  const addSources = addCommand ? await configSources((await import('./env.ts')).readSettings().configFile) : undefined;
  const declared = addSources ? declaredAddFlags(addSources, Object.keys(options)) : [];
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { ...options, ...Object.fromEntries(declared.map((f) => [f, { type: 'string' as const }])) },
  });
  const [command, ...rest] = positionals;
  if (values.help && command === 'add') {
    const { addHelp, configSources } = await import('./add-target.ts');
    process.stdout.write(addHelp(await configSources((await import('./env.ts')).readSettings().configFile)));
    return 0;
  }
  if (values.help || !command) {
    process.stdout.write(USAGE);
    return command || values.help ? 0 : 1;
  }
  const settings = (await import('./env.ts')).readSettings();
  switch (command) {
    case 'serve':
      await import('./main.ts');
      return -1;
    case 'add':
      return cmdAdd(settings, rest, values, addSources);
    case 'libraries':
      return cmdLibraries(settings);
    case 'search':
      return cmdSearch(settings, rest);
    case 'context':
      return cmdContext(settings, rest, values);
    case 'jobs':
      return cmdJobs(settings, rest);
    case 'demo':
      return cmdDemo(settings);
    case 'keys':
      return (await import('./cli-admin.ts')).cmdKeys(openKernel, settings, rest, values);
    case 'rename':
      return (await import('./cli-admin.ts')).cmdRename(openKernel, settings, rest);
    case 'delete':
      return cmdDelete(settings, rest);
    case 'settings':
      return (await import('./cli-admin.ts')).cmdSettings(openKernel, settings, rest);
    case 'account':
      return (await import('./cli-admin.ts')).cmdAccount(openKernel, settings, rest);
    case 'backup':
      return cmdBackup(settings, rest, values);
    case 'restore':
      return cmdRestore(settings, rest, values);
    default:
      process.stderr.write(`refdesk: unknown command "${command}"\n\n${USAGE}`);
      return 1;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  runCli(process.argv.slice(2)).then(
    (code) => {
      if (code >= 0) process.exit(code);
    },
    (e) => {
      process.stderr.write(`refdesk: ${describeStartupError(e)}\n`);
      process.exit(1);
    },
  );
}
