/** Settings on PostgreSQL (JSON values by key; secret values arrive sealed). Not written yet. */
import type { SettingsStore } from '../../core/contracts.ts';
import { notBuilt, PgRole } from './database.ts';

export class PgSettings extends PgRole implements SettingsStore {
  async getSetting(_key: string): Promise<unknown> {
    return notBuilt('settings', 'getSetting');
  }
  async setSetting(_key: string, _value: unknown): Promise<void> {
    return notBuilt('settings', 'setSetting');
  }
}
