/**
 * `refdesk db migrate` and `refdesk db status`: the PostgreSQL store's schema on DATABASE_URL
 * (plugins/store-postgres/migrate.ts). Errors are one line saying what to fix, without a stack
 * trace or the URL's password.
 */
import { parseArgs } from 'node:util';
import { PostgresStoreError, createPool, type PostgresPool } from '../plugins/store-postgres/pool.ts';
import { loadMigrations, migrate, schemaStatus, type SchemaState } from '../plugins/store-postgres/migrate.ts';

export const DB_USAGE = `Usage: refdesk db <migrate|status> [--json]

  migrate          apply the pending schema migrations to DATABASE_URL (safe to run on several nodes at once)
  status [--json]  list the applied, skipped and pending schema versions of DATABASE_URL

DATABASE_URL=postgres://user:password@host:5432/database
`;

interface Out {
  write(s: string): unknown;
}

export async function runDbCommand(argv: string[], env: NodeJS.ProcessEnv, out: Out = process.stdout, err: Out = process.stderr): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
  } catch (e) {
    err.write(`refdesk: ${e instanceof Error ? e.message : String(e)}\n\n${DB_USAGE}`);
    return 1;
  }
  const { positionals, values } = parsed;
  if (values.help) {
    out.write(DB_USAGE);
    return 0;
  }
  const [sub, ...extra] = positionals;
  if (!sub || (sub !== 'migrate' && sub !== 'status') || extra.length > 0) {
    err.write(sub && sub !== 'migrate' && sub !== 'status' ? `refdesk: unknown db command "${sub}"\n\n${DB_USAGE}` : DB_USAGE);
    return 1;
  }
  let db: PostgresPool | undefined;
  try {
    // One connection is all either command needs; a short connect timeout for an unreachable server.
    db = createPool(env.DATABASE_URL, { max: 1, connectTimeoutMs: 10_000, applicationName: `refdesk db ${sub}` });
    const migrations = loadMigrations();
    if (sub === 'migrate') {
      const result = await migrate(db, migrations);
      if (values.json) out.write(JSON.stringify(result) + '\n');
      else if (result.ran.length === 0) out.write(`Database ${db.db.where} is up to date (schema version ${result.version}).\n`);
      else {
        for (const r of result.ran) out.write(`${r.status === 'applied' ? 'applied' : 'skipped'} ${label(r)}${r.status === 'skipped' ? ` (needs the "${migrations.find((m) => m.version === r.version)?.requiresExtension}" extension, not available on this server)` : ''}\n`);
        out.write(`Database ${db.db.where} is at schema version ${result.version}.\n`);
      }
      return 0;
    }
    const state = await schemaStatus(db, migrations);
    if (values.json) out.write(JSON.stringify(statusJson(state)) + '\n');
    else out.write(statusText(state, db.db.where));
    return state.unknown.length > 0 || state.changed.length > 0 || state.outOfOrder.length > 0 ? 1 : 0;
  } catch (e) {
    const message = e instanceof PostgresStoreError ? e.message : db ? db.db.redact(e instanceof Error ? e.message : String(e)) : 'unexpected error';
    err.write(`refdesk: ${message}\n`);
    return 1;
  } finally {
    await db?.end().catch(() => undefined);
  }
}

function label(m: { version: number; name: string }): string {
  return `${String(m.version).padStart(3, '0')}_${m.name}`;
}

function statusJson(state: SchemaState) {
  return {
    applied: state.applied.filter((a) => a.status === 'applied').map(({ version, name, appliedAt }) => ({ version, name, appliedAt })),
    skipped: state.applied.filter((a) => a.status === 'skipped').map(({ version, name, appliedAt }) => ({ version, name, appliedAt })),
    pending: state.pending.map(({ version, name }) => ({ version, name })),
    unknown: state.unknown.map(({ version, name }) => ({ version, name })),
    changed: state.changed.map(({ version, name }) => ({ version, name })),
  };
}

function statusText(state: SchemaState, where: string): string {
  const lines = [`Database ${where}:`];
  const pendingSet = new Set(state.pending.map((m) => m.version));
  for (const a of state.applied) {
    const note = state.unknown.includes(a) ? ' (unknown to this Refdesk: a newer one migrated the database)' : state.changed.includes(a) ? ' (file changed since it was applied)' : '';
    const status = a.status === 'skipped' ? (pendingSet.has(a.version) ? 'skipped, pending now' : 'skipped') : 'applied';
    lines.push(`  ${status.padEnd(20)} ${label(a)}  ${a.appliedAt}${note}`);
  }
  for (const m of state.pending) if (!state.applied.some((a) => a.version === m.version)) lines.push(`  ${'pending'.padEnd(20)} ${label(m)}`);
  if (state.applied.length === 0 && state.pending.length === 0) lines.push('  no migrations');
  if (state.unknown.length > 0 || state.changed.length > 0 || state.outOfOrder.length > 0) lines.push('This Refdesk cannot migrate or serve this database as it is (see the notes above).');
  else lines.push(state.pending.length > 0 ? 'Run `refdesk db migrate` to apply the pending migrations.' : 'Up to date.');
  return lines.join('\n') + '\n';
}
