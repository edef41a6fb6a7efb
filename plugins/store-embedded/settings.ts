/** The embedded store's settings role (table settings). */
import type { SettingsStore } from '../../core/contracts.ts';
import { settingJson, validateSettingKey } from '../../core/store-admin-rules.ts';
import { EmbeddedRole } from './database.ts';
import { get, parseJson, run } from './sqlite.ts';

export class EmbeddedSettings extends EmbeddedRole implements SettingsStore {
  async getSetting(key: string): Promise<unknown> {
    const db = this.requireDb();
    validateSettingKey(key);
    const row = get(db, 'SELECT value FROM settings WHERE key = ?', [key]);
    return row ? parseJson<unknown>(row.value, undefined) : undefined;
  }

  async setSetting(key: string, value: unknown): Promise<void> {
    const db = this.requireWritable();
    validateSettingKey(key);
    if (value === undefined) run(db, 'DELETE FROM settings WHERE key = ?', [key]);
    else run(db, 'INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)', [key, settingJson(key, value)]);
    await this.persist();
  }
}
