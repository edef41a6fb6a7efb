/**
 * Settings on PostgreSQL (table settings: JSON values by key; secret values arrive sealed under
 * ENCRYPTION_KEY, core/settings.ts). Settings are read per request (the access policy, MCP
 * options): answers, absent keys included, are kept in memory per node and dropped when the
 * change feed names the key (topic `settings`, published after every write here or on another
 * node). Callers get their own copy of a value.
 */
import type { SettingsStore } from '../../core/contracts.ts';
import { settingJson, validateSettingKey } from '../../core/store-admin-rules.ts';
import { PgRole, type PgDatabase } from './database.ts';
import { ReadCache } from './read-cache.ts';

/** What a key holds: its JSON value, or absent. */
type Stored = { value: unknown } | null;

export class PgSettings extends PgRole implements SettingsStore {
  readonly cache = new ReadCache<string, Stored>();

  constructor(database: PgDatabase) {
    super(database);
    database.changes.on('change', (topic: string, key: string) => {
      if (topic === 'settings') this.cache.forget(key);
    });
  }

  async getSetting(key: string): Promise<unknown> {
    this.requireOpen();
    validateSettingKey(key);
    const stored = await this.cache.get(key, async (k) => {
      const [row] = await this.query('SELECT value FROM settings WHERE key = $1', [k]);
      return row ? { value: row.value } : null;
    });
    return stored ? structuredClone(stored.value) : undefined;
  }

  async setSetting(key: string, value: unknown): Promise<void> {
    validateSettingKey(key);
    if (value === undefined) {
      await this.query('DELETE FROM settings WHERE key = $1', [key]);
    } else {
      await this.query(
        `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2::jsonb, $3)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
        [key, settingJson(key, value), this.now()],
      );
    }
    await this.database.publish('settings', key);
  }
}
