/** The embedded store's settings role (table settings). */
import type { SettingsStore } from '../../core/contracts.ts';
import { settingJson, validateSettingKey } from '../../core/store-admin-rules.ts';
import { EmbeddedRole } from './database.ts';
import { get, parseJson, run } from './sqlite.ts';
import { memoRead } from './read-memo.ts';

export class EmbeddedSettings extends EmbeddedRole implements SettingsStore {
  async getSetting(key: string): Promise<unknown> {
    const db = this.requireDb();
    validateSettingKey(key);
    // The policy is read by every question: its text comes from memory until the database changes
    // (read-memo.ts), parsed for each caller (who may change what it gets).
    const value = memoRead(db, `settings\0${key}`, () => get(db, 'SELECT value FROM settings WHERE key = ?', [key])?.value ?? null);
    return value !== null ? parseJson<unknown>(value, undefined) : undefined;
  }

  async setSetting(key: string, value: unknown): Promise<void> {
    const db = this.requireWritable();
    validateSettingKey(key);
    if (value === undefined) run(db, 'DELETE FROM settings WHERE key = ?', [key]);
    else run(db, 'INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)', [key, settingJson(key, value)]);
    await this.persist();
  }
}
