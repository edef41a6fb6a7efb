/** The in-memory store's settings role (core/testing/memory-store.ts). */
import type { SettingsStore } from '../../contracts.ts';
import { settingJson, validateSettingKey } from '../../store-admin-rules.ts';
import { MemoryRole, parseJson } from './state.ts';

export class MemorySettings extends MemoryRole implements SettingsStore {
  async getSetting(key: string): Promise<unknown> {
    this.requireOpen();
    validateSettingKey(key);
    const text = this.state.settings.get(key);
    return text === undefined ? undefined : parseJson<unknown>(text, undefined);
  }

  async setSetting(key: string, value: unknown): Promise<void> {
    this.requireOpen();
    validateSettingKey(key);
    if (value === undefined) this.state.settings.delete(key);
    else this.state.settings.set(key, settingJson(key, value));
  }
}
