/**
 * Rules shared by every Store for the operator data added beside the catalog: settings, API key
 * records and library aliases (renames). Both the embedded and the in-memory store use them, so
 * they refuse the same input with the same messages.
 */
import type { ApiKeyInput, ApiKeyRecord } from './contracts.ts';
import { RefdeskError } from './errors.ts';
import { invalid } from './store-rules.ts';

export const API_KEY_ROLES: readonly ApiKeyRecord['role'][] = ['member', 'admin'];

/** Setting keys: 1-100 characters of letters, digits, '.', '_' and '-'. */
export function validateSettingKey(key: string): void {
  if (typeof key !== 'string' || !/^[A-Za-z0-9._-]{1,100}$/.test(key)) {
    throw invalid("A setting key is 1-100 characters: letters, digits, '.', '_' or '-'.");
  }
}

/** The JSON text of a setting value; values JSON cannot hold are refused. */
export function settingJson(key: string, value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw invalid(`Setting "${key}": the value cannot be stored as JSON.`);
  return text;
}

export function validateApiKeyInput(input: ApiKeyInput): void {
  if (!input || typeof input !== 'object') throw invalid('An API key record needs an id, a name, a plan, a role, a prefix and a hash.');
  for (const k of ['id', 'plan', 'prefix', 'hash'] as const) {
    if (typeof input[k] !== 'string' || input[k] === '') throw invalid(`An API key record needs a non-empty ${k}.`);
  }
  if (typeof input.name !== 'string') throw invalid('An API key name must be a string.');
  if (!API_KEY_ROLES.includes(input.role)) throw invalid(`An API key role is one of ${API_KEY_ROLES.join(', ')}.`);
}

export function duplicateApiKey(): RefdeskError {
  return new RefdeskError('already_exists', 'An API key with this id or hash already exists.');
}

export function renameTargetExists(newId: string): RefdeskError {
  return new RefdeskError('already_exists', `Cannot rename to "${newId}": a library with that ID already exists.`);
}

export function validateRename(oldId: string, newId: string): void {
  if (typeof oldId !== 'string' || typeof newId !== 'string' || !oldId || !newId) throw invalid('A rename needs the old and the new library ID.');
  if (oldId === newId) throw invalid(`The new library ID is the same as the old one ("${oldId}").`);
}
