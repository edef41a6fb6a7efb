import { Type } from '@sinclair/typebox';
import { definePlugin, defineStore } from '../../core/define.ts';
import { Tokens } from '../../core/di-tokens.ts';
import { EMBEDDED_STORE_DEFAULTS, EmbeddedStore } from './embedded-store.ts';

export default definePlugin({
  name: '@refdesk/store-embedded',
  version: '1.0.0',
  kernel: '^1.0.0',
  definitions: [
    defineStore({
      kind: 'embedded',
      description:
        'The default store: an SQLite catalog (sql.js, in memory) written atomically to <dataDir>/<fileName>, and one index segment file per served build in <dataDir>/segments. One writer per data directory.',
      options: Type.Object(
        {
          fileName: Type.String({
            minLength: 1,
            pattern: '^[^/\\\\]+$',
            default: EMBEDDED_STORE_DEFAULTS.fileName,
            description: 'Database file name inside the data directory.',
          }),
          flushIntervalMs: Type.Integer({
            minimum: 10,
            default: EMBEDDED_STORE_DEFAULTS.flushIntervalMs,
            description: 'How often batched changes (snippets, job logs) are written to disk.',
          }),
          indexCacheSize: Type.Integer({
            minimum: 0,
            default: EMBEDDED_STORE_DEFAULTS.indexCacheSize,
            description: 'How many index segment files (one per served library version) are held open at most; segments past it close their file and stay in memory within segmentCacheBytes.',
          }),
          segmentCacheBytes: Type.Integer({
            minimum: 0,
            default: EMBEDDED_STORE_DEFAULTS.segmentCacheBytes,
            description:
              'Memory budget of the open index segments, in bytes; the least recently used are closed beyond it (snippet text is read from the segment files per answer).',
          }),
        },
        { additionalProperties: false },
      ),
      deps: { env: Tokens.Env, logger: Tokens.Logger, clock: Tokens.Clock },
      create(options, deps) {
        return new EmbeddedStore(options, deps);
      },
    }),
  ],
});

export { EmbeddedStore, EMBEDDED_STORE_DEFAULTS, type EmbeddedStoreOptions, type EmbeddedStoreDeps } from './embedded-store.ts';
export { readDataLock, type DataLockInfo } from '../../core/data-lock.ts';
