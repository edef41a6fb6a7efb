/**
 * The settings page's form-to-API mapping (server/ui/settings-forms.ts): what each form sends to
 * PATCH /api/settings and PATCH /api/v2/policies, and where an API message lands.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { accessPatch, fieldErrors, gitPatch, policyPatch, providersPatch } from '../../server/ui/settings-forms.ts';
import { validateSettingsPatch } from '../../core/provider-settings.ts';
import { applyPolicyPatch, defaultPolicy } from '../../server/access/policy.ts';

test('providers: an empty key field keeps the stored key (not sent), "remove" sends null, empty fields clear', () => {
  const keep = providersPatch({ 'llm.provider': 'openai', 'llm.model': ' gpt-4o ', 'llm.baseUrl': '', 'llm.apiKey': '', 'embedding.provider': '' });
  assert.deepEqual(keep, { llm: { provider: 'openai', model: 'gpt-4o', baseUrl: null }, embedding: { provider: null, model: null, baseUrl: null } });
  const set = providersPatch({ 'llm.provider': 'custom', 'llm.apiKey': 'sk-typed', 'embedding.removeKey': 'on', 'embedding.apiKey': 'ignored' });
  assert.equal((set.llm as Record<string, unknown>).apiKey, 'sk-typed');
  assert.equal((set.embedding as Record<string, unknown>).apiKey, null);
  validateSettingsPatch(keep);
});

test('git: hosts are sent only when the list or a token changes; removed and empty rows are left out', () => {
  const stored = [{ host: 'git.example.com', provider: 'gitlab' as const }];
  const same = gitPatch({ 'git.hosts[0].host': 'git.example.com', 'git.hosts[0].provider': 'gitlab', 'git.hosts[1].host': '', 'git.hosts[1].provider': 'gitlab' }, stored);
  assert.deepEqual(same.patch, { git: {} });
  const changed = gitPatch({ 'git.githubToken': 'ghp_x', 'git.hosts[0].host': 'git.example.com', 'git.hosts[0].provider': 'gitlab', 'git.hosts[0].remove': 'on', 'git.hosts[1].host': 'ghe.example.com', 'git.hosts[1].provider': 'github', 'git.hosts[1].token': 't' }, stored);
  assert.deepEqual(changed.patch, { git: { githubToken: 'ghp_x', hosts: [{ host: 'ghe.example.com', provider: 'github', token: 't' }] } });
  assert.deepEqual(changed.rowOf, [1]);
  const tokenOff = gitPatch({ 'git.removeGitlabToken': 'on', 'git.hosts[0].host': 'git.example.com', 'git.hosts[0].provider': 'gitlab', 'git.hosts[0].removeToken': 'on' }, stored);
  assert.deepEqual(tokenOff.patch, { git: { gitlabToken: null, hosts: [{ host: 'git.example.com', provider: 'gitlab', token: null }] } });
});

test('access: a checkbox not sent is Off; empty limits go back to the configuration; a non-number goes to the API as typed', () => {
  const p = accessPatch({ 'anonymous.parse': 'on', 'uploads.maxBytes': '', 'uploads.maxFiles': '12x' });
  assert.deepEqual(p, { anonymous: { parse: true, refresh: false, delete: false, supportBundle: false }, mcp: { requireKey: false }, uploads: { maxBytes: null, maxFiles: '12x' } });
  assert.throws(() => validateSettingsPatch(p), /uploads\.maxFiles/);
});

test('policy: checkboxes become enable/disable lists, text areas replace the lists, "none" is no filter', () => {
  const body = policyPatch({ 'sourceTypes.public_repos': 'on', 'libraryFilters.mode': 'none', 'libraryFilters.quality.minTrustScore': '3', 'libraryFilters.quality.blockedLibraries': '/a/b\r\n\n /c/d ' });
  const next = applyPolicyPatch(defaultPolicy(), body);
  assert.equal(next.sourceTypes.public_repos.enabled, true);
  assert.equal(next.sourceTypes.websites.enabled, false);
  assert.equal(next.libraryFilters.mode, null);
  assert.equal(next.libraryFilters.quality.minTrustScore, 3);
  assert.deepEqual(next.libraryFilters.quality.blockedLibraries, ['/a/b', '/c/d']);
});

test('fieldErrors: each problem beside the field it names, the rest general', () => {
  const r = fieldErrors('Invalid settings: llm.baseUrl: must be an http or https URL; git.hosts[0].host: must be a host name; something else.', ['llm.baseUrl', 'git.hosts[2].host'], (p) => p.replace('[0]', '[2]'));
  assert.deepEqual(r.errors, { 'llm.baseUrl': 'must be an http or https URL', 'git.hosts[2].host': 'must be a host name' });
  assert.deepEqual(r.general, ['something else']);
  assert.deepEqual(fieldErrors('Field "newPassword" must not be empty.', ['currentPassword', 'newPassword']).errors, { newPassword: 'Field "newPassword" must not be empty' });
  assert.deepEqual(fieldErrors('currentPassword is wrong.', ['currentPassword', 'newPassword']).errors, { currentPassword: 'currentPassword is wrong' });
  assert.deepEqual(fieldErrors('Invalid policy update: body.libraryFilters.quality.minTrustScore: must be <= 10', ['libraryFilters.quality.minTrustScore']).errors, { 'libraryFilters.quality.minTrustScore': 'must be <= 10' });
});
