import { Type } from '@sinclair/typebox';
import { definePlugin, defineStore } from '../../core/define.ts';
import { Tokens } from '../../core/di-tokens.ts';
import { ConfigError } from '../../core/errors.ts';
import { envSecretKey, parseSecretKey } from '../../core/secrets.ts';
import { POSTGRES_STORE_DEFAULTS } from './options.ts';

export default definePlugin({
  name: '@refdesk/store-postgres',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineStore({
      kind: 'postgres',
      description:
        'Several Refdesk nodes on one PostgreSQL server (docs/scale-out.md): the catalog, jobs, keys, sessions, settings, audit log and index segments in the database named by DATABASE_URL (never an option: it holds a password), with each node caching what it reads. Needs ENCRYPTION_KEY, identical on every node. Chosen by default when DATABASE_URL is set.',
      options: Type.Object(
        {
          poolSize: Type.Integer({ minimum: 1, maximum: 1000, default: POSTGRES_STORE_DEFAULTS.poolSize, description: "Connections in this node's pool." }),
          statementTimeoutMs: Type.Integer({
            minimum: 0,
            default: POSTGRES_STORE_DEFAULTS.statementTimeoutMs,
            description: 'Statement timeout on every pooled connection, in ms (0: none).',
          }),
          cacheDir: Type.String({
            default: POSTGRES_STORE_DEFAULTS.cacheDir,
            description: "Where this node caches index segments on local disk; '' is <dataDir>/pg-cache.",
          }),
          segmentCacheBytes: Type.Integer({
            minimum: 0,
            default: POSTGRES_STORE_DEFAULTS.segmentCacheBytes,
            description: 'Memory budget of the open index segments, in bytes.',
          }),
          segmentDiskBytes: Type.Integer({
            minimum: 0,
            default: POSTGRES_STORE_DEFAULTS.segmentDiskBytes,
            description: "Disk budget of this node's cached segment and vector files, in bytes (least recently used removed past it).",
          }),
          leaseMs: Type.Integer({
            minimum: 1000,
            default: POSTGRES_STORE_DEFAULTS.leaseMs,
            description: "A running job's lease: another node may take the job over this long after its last heartbeat.",
          }),
          heartbeatMs: Type.Integer({ minimum: 100, default: POSTGRES_STORE_DEFAULTS.heartbeatMs, description: 'How often the node running a job renews its lease.' }),
          pollMs: Type.Integer({
            minimum: 100,
            default: POSTGRES_STORE_DEFAULTS.pollMs,
            description: 'How often the change feed is polled (the fallback when LISTEN is not available, and a safety net).',
          }),
          listen: Type.Boolean({
            default: POSTGRES_STORE_DEFAULTS.listen,
            description: 'LISTEN for changes on a dedicated connection (false: polling only, e.g. behind a pooler in transaction mode).',
          }),
        },
        { additionalProperties: false },
      ),
      deps: { env: Tokens.Env, logger: Tokens.Logger, clock: Tokens.Clock },
      async create(options, deps) {
        // Secrets (source tokens, provider keys) are sealed before they reach the shared
        // database, so every node must open them with the same key: no per-node secret.key.
        const key = envSecretKey(process.env);
        if (!key) {
          throw new ConfigError(
            'The PostgreSQL store (DATABASE_URL) needs ENCRYPTION_KEY, the same on every node, to seal the secrets it keeps in the shared database: create one with `openssl rand -base64 32` and set it on every node.',
          );
        }
        parseSecretKey(key);
        // The driver is loaded only now: a server on the embedded store never loads `pg`.
        const { PostgresStore } = await import('./store.ts');
        return new PostgresStore(options, { ...deps, databaseUrl: process.env.DATABASE_URL });
      },
    }),
  ],
});

export { POSTGRES_STORE_DEFAULTS, type PostgresStoreOptions } from './options.ts';
