/**
 * `refdesk migrate-store --from DATA_DIR --to DATABASE_URL` (and the reverse, for backups; a data
 * directory to another, or a database to another, work too): moves a whole deployment from one
 * store to another (core/store-transfer.ts), re-sealing the secrets of library specs and settings
 * from the source's key to the target's:
 *
 * - a data directory's key is its `secret.key` (created in a target directory); a source
 *   directory without one was run with ENCRYPTION_KEY, which then opens its secrets;
 * - a database's key is ENCRYPTION_KEY (or REFDESK_SECRET_KEY), required.
 *
 * Both ends are opened as writers: a data directory's lock refuses it while a server runs there;
 * the nodes of a database should be stopped (they would not see rows written under them).
 * Prints counts, never a secret; errors are one line.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Logger, Store, StoreTransfer } from '../core/contracts.ts';
import { prepareDataDir } from '../core/data-lock.ts';
import { RefdeskError } from '../core/errors.ts';
import { createSecretBox, dataDirSecretBox, envSecretKey, parseSecretKey, SECRET_KEY_FILE, type SecretBox } from '../core/secrets.ts';
import { createConsoleLogger, systemClock } from '../core/services.ts';
import { moveStore, type TransferCounts } from '../core/store-transfer.ts';
import { describeStartupError } from './startup-error.ts';

export const MIGRATE_STORE_USAGE = `Usage: refdesk migrate-store --from <DATA_DIR|DATABASE_URL> --to <DATA_DIR|DATABASE_URL> [--force]

  Moves everything (libraries with their versions, snippets and vectors, library-search vectors,
  jobs and logs with the raw uploads of jobs still to run, API keys, the admin account, sessions,
  the audit log, settings) from one store to another:
    --from ./data --to postgres://user:password@host:5432/refdesk     embedded to PostgreSQL
    --from postgres://... --to ./backup                               PostgreSQL to a data directory
  Secrets are re-sealed: a data directory's with its secret.key, a database's with ENCRYPTION_KEY.
  Stop the servers of both ends first. The target must be empty; --force replaces what it holds
  (a move that stopped half-way is recognised and needs --force to be done again).
`;

interface Out {
  write(s: string): unknown;
}

/** One end of the move: its store, its transfer capability and its sealing key. */
interface End {
  label: string;
  store: Store;
  transfer: StoreTransfer;
  box: SecretBox;
  close(): Promise<void>;
}

const isDatabaseUrl = (s: string) => /^postgres(ql)?:\/\//i.test(s.trim());

/** The shared key (ENCRYPTION_KEY), required by a database end. */
function envBox(env: NodeJS.ProcessEnv, why: string): SecretBox {
  const key = envSecretKey(env);
  if (!key) throw new RefdeskError('config_error', `ENCRYPTION_KEY is not set: ${why} Set the key every node of the database uses (openssl rand -base64 32 for a new deployment).`);
  return createSecretBox(parseSecretKey(key));
}

async function openDataDir(dir: string, role: 'source' | 'target', env: NodeJS.ProcessEnv, logger: Logger): Promise<End> {
  const dataDir = resolve(dir);
  if (role === 'source' && !existsSync(join(dataDir, 'refdesk.sqlite'))) {
    throw new RefdeskError('not_found', `--from ${dir}: no Refdesk data directory there (no refdesk.sqlite).`);
  }
  if (role === 'target') await prepareDataDir(dataDir);
  let box: SecretBox;
  if (role === 'target' || existsSync(join(dataDir, SECRET_KEY_FILE))) box = dataDirSecretBox(dataDir, null);
  else if (envSecretKey(env)) box = envBox(env, '');
  else {
    const fail = (): never => {
      throw new RefdeskError('config_error', `--from ${dir} holds sealed secrets but has no ${SECRET_KEY_FILE}: set ENCRYPTION_KEY to the key it was run with.`);
    };
    box = { seal: fail, open: fail };
  }
  const { EmbeddedStore } = await import('../plugins/store-embedded/embedded-store.ts');
  const { EmbeddedTransfer } = await import('../plugins/store-embedded/transfer.ts');
  const store = new EmbeddedStore({}, { env: { dataDir, mode: 'writer' }, logger, clock: systemClock });
  await store.open();
  return { label: dataDir, store, transfer: new EmbeddedTransfer(store), box, close: () => store.close() };
}

async function openDatabase(url: string, role: 'source' | 'target', env: NodeJS.ProcessEnv, logger: Logger): Promise<End> {
  const { parseDatabaseUrl } = await import('../plugins/store-postgres/pool.ts');
  const { where } = parseDatabaseUrl(url);
  const box = envBox(env, `the secrets in the ${role} database ${where} are sealed with it.`);
  const { PostgresStore } = await import('../plugins/store-postgres/store.ts');
  const { PgTransfer } = await import('../plugins/store-postgres/transfer.ts');
  // The segment cache of this one-off process lives in a temporary directory.
  const scratch = await mkdtemp(join(tmpdir(), 'refdesk-migrate-'));
  const store = new PostgresStore({ poolSize: 4, cacheDir: join(scratch, 'pg-cache') }, { env: { dataDir: scratch, mode: 'writer' }, logger, clock: systemClock, databaseUrl: url });
  try {
    await store.open();
  } catch (e) {
    await store.close().catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
    throw e;
  }
  return {
    label: `postgres ${where}`,
    store,
    transfer: new PgTransfer(store, store.database),
    box,
    close: async () => {
      await store.close();
      await rm(scratch, { recursive: true, force: true });
    },
  };
}

function openEnd(where: string, role: 'source' | 'target', env: NodeJS.ProcessEnv, logger: Logger): Promise<End> {
  return isDatabaseUrl(where) ? openDatabase(where.trim(), role, env, logger) : openDataDir(where, role, env, logger);
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The counts as lines. */
export function describeCounts(c: TransferCounts): string[] {
  return [
    `${plural(c.library, 'library', 'libraries')}, ${plural(c.alias, 'alias', 'aliases')}`,
    `${plural(c.version, 'served version')} (${plural(c.snippets, 'snippet')}), ${c.vectors} with their snippet vectors`,
    `${plural(c.libraryVector, 'library-search vector')}`,
    `${plural(c.job, 'job')} with their logs, ${plural(c.upload, 'raw upload')} of jobs still to run`,
    `${plural(c.apiKey, 'API key')}`,
    `${c.adminAccount ? 'the admin account' : 'no admin account (factory credentials)'}, ${plural(c.session, 'session')}`,
    `${plural(c.audit, 'audit entry', 'audit entries')}`,
    `${plural(c.setting, 'setting')}`,
  ];
}

export async function runMigrateStoreCommand(argv: string[], env: NodeJS.ProcessEnv, out: Out = process.stdout, err: Out = process.stderr): Promise<number> {
  let values: { from?: string; to?: string; force?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: { from: { type: 'string' }, to: { type: 'string' }, force: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (e) {
    err.write(`refdesk: ${e instanceof Error ? e.message : String(e)}\n\n${MIGRATE_STORE_USAGE}`);
    return 1;
  }
  if (values.help) {
    out.write(MIGRATE_STORE_USAGE);
    return 0;
  }
  if (!values.from || !values.to) {
    err.write(`refdesk: migrate-store needs --from and --to.\n\n${MIGRATE_STORE_USAGE}`);
    return 1;
  }
  if (!isDatabaseUrl(values.from) && !isDatabaseUrl(values.to) && resolve(values.from) === resolve(values.to)) {
    err.write('refdesk: --from and --to are the same data directory.\n');
    return 1;
  }
  if (isDatabaseUrl(values.from) && values.from.trim() === values.to.trim()) {
    err.write('refdesk: --from and --to are the same database.\n');
    return 1;
  }
  const logger = createConsoleLogger(env.LOG_LEVEL === 'debug' || env.LOG_LEVEL === 'info' ? env.LOG_LEVEL : 'warn');
  const ends: End[] = [];
  let writing = false;
  try {
    const source = await openEnd(values.from, 'source', env, logger);
    ends.push(source);
    const target = await openEnd(values.to, 'target', env, logger);
    ends.push(target);
    let lastLibrary = '';
    const counts = await moveStore(source, target, {
      force: values.force === true,
      from: source.box,
      to: target.box,
      onWriting: () => (writing = true),
      onRow(row) {
        if (row.kind === 'version' && row.libraryId !== lastLibrary) {
          lastLibrary = row.libraryId;
          err.write(`  ${row.libraryId}\n`);
        }
      },
    });
    out.write(`Moved from ${source.label} to ${target.label}:\n${describeCounts(counts).map((l) => `  ${l}\n`).join('')}`);
    return 0;
  } catch (e) {
    // PostgresStoreError messages name host:port/database, never the password.
    err.write(`refdesk: ${e instanceof Error && e.name === 'PostgresStoreError' ? e.message : describeStartupError(e)}\n`);
    if (writing) err.write('refdesk: the target is half-written; run the same command with --force to start it over.\n');
    return 1;
  } finally {
    for (const end of ends.reverse()) await end.close().catch(() => undefined);
  }
}
