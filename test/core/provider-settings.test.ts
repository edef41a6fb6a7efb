import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createSecretBox, isSealed } from '../../core/secrets.ts';
import {
  gitTokenFor,
  gitView,
  mergeSettings,
  openProviderSettings,
  providerView,
  resolveProviders,
  validateSettingsPatch,
  type ProviderSettings,
  type StoredProviderSettings,
} from '../../core/provider-settings.ts';

const box = createSecretBox(randomBytes(32));
const empty = (): StoredProviderSettings => ({ llm: {}, embedding: {}, git: {} });
const apply = (stored: StoredProviderSettings, patch: unknown) => mergeSettings(stored, validateSettingsPatch(patch), box);
const invalid = (patch: unknown, ...parts: string[]) =>
  assert.throws(
    () => apply(empty(), patch),
    (e: any) => e.code === 'invalid_request' && parts.every((p) => e.message.includes(p)),
  );

describe('a settings change is validated', () => {
  test('unknown sections and fields are refused naming them; types and enums name the field', () => {
    invalid({ llm: { provider: 'openai', temperature: 1 } }, 'llm', 'unknown property "temperature"');
    invalid({ smtp: {} }, 'unknown property "smtp"');
    invalid({ llm: { provider: 'mistral' } }, 'llm.provider', 'must be one of');
    invalid({ embedding: { provider: 'anthropic' } }, 'embedding.provider');
    invalid({ anonymous: { refresh: 'yes' } }, 'anonymous.refresh', 'must be boolean');
    invalid({ anonymous: { upload: true } }, 'unknown property "upload"');
    invalid({ git: { hosts: [{ host: 'git.acme.io' }] } }, 'git.hosts[0]', 'missing required property "provider"');
    invalid({ git: { hosts: [{ host: 'https://git.acme.io/x', provider: 'gitlab' }] } }, 'git.hosts[0].host');
    invalid({ git: { hosts: [{ host: 'github.com', provider: 'github' }] } }, 'git.githubToken');
    invalid({ llm: { provider: 'custom', baseUrl: 'ftp://x', model: 'm' } }, 'llm.baseUrl', 'http');
    invalid({ llm: { provider: 'openai', baseUrl: 'https://user:pw@api.x.com/v1' } }, 'llm.baseUrl', 'apiKey');
    invalid({ llm: { provider: 'custom', model: 'm' } }, 'llm.baseUrl');
    invalid({ llm: { provider: 'custom', baseUrl: 'http://127.0.0.1:1/v1' } }, 'llm.model');
    invalid({ embedding: { apiKey: 'sk-xxxxxxxxxxxxxxxx' } }, 'embedding.provider');
    invalid([], 'JSON object');
  });

  test('a bad secret is refused without echoing it', () => {
    assert.throws(() => apply(empty(), { llm: { provider: 'openai', apiKey: 12345678901234 } }), (e: any) => /llm.apiKey/.test(e.message) && !e.message.includes('12345678901234'));
    assert.throws(() => apply(empty(), { llm: { provider: 'openai', apiKey: 'sk-' + 'x'.repeat(5000) } }), (e: any) => /llm.apiKey/.test(e.message) && !e.message.includes('xxxxxxxx'));
  });
});

describe('merging a change', () => {
  test('keys are sealed; GET shows set and last four only', () => {
    const { stored } = apply(empty(), { llm: { provider: 'openai', apiKey: 'sk-live-abcdefghij1234' }, git: { githubToken: 'ghp_short' } });
    assert.ok(isSealed(stored.llm.apiKey));
    assert.ok(!JSON.stringify(stored).includes('abcdefghij'));
    assert.deepEqual(providerView(stored.llm, box), { provider: 'openai', model: null, baseUrl: null, apiKey: { set: true, last4: '1234' } });
    const g = gitView(stored.git, box) as any;
    assert.deepEqual(g.githubToken, { set: true }, 'a short secret shows no characters');
    assert.deepEqual(g.gitlabToken, { set: false });
    assert.deepEqual(providerView(stored.llm, createSecretBox(randomBytes(32))).apiKey, { set: true, unreadable: true });
  });

  test('changing the provider without the key clears the key (and what was the old provider\'s)', () => {
    const a = apply(empty(), { llm: { provider: 'openai', apiKey: 'sk-live-abcdefghij1234', model: 'gpt-4o' } }).stored;
    const b = apply(a, { llm: { provider: 'anthropic' } });
    assert.equal(b.stored.llm.apiKey, undefined);
    assert.equal(b.stored.llm.model, undefined);
    assert.deepEqual(b.cleared, ['llm.apiKey']);
    const c = apply(a, { llm: { provider: 'anthropic', apiKey: 'sk-ant-0123456789abcd' } });
    assert.equal(box.open(c.stored.llm.apiKey!), 'sk-ant-0123456789abcd');
    assert.deepEqual(c.cleared, []);
  });

  test('changing the base URL without the key clears it; the same URL (or another field) keeps it', () => {
    const a = apply(empty(), { llm: { provider: 'custom', baseUrl: 'https://llm.acme.io/v1', model: 'm1', apiKey: 'sk-custom-0123456789' } }).stored;
    assert.ok(apply(a, { llm: { model: 'm2' } }).stored.llm.apiKey, 'a model change keeps the key');
    assert.ok(apply(a, { llm: { baseUrl: 'https://llm.acme.io/v1/' } }).stored.llm.apiKey, 'the same URL (trailing slash) keeps the key');
    const moved = apply(a, { llm: { baseUrl: 'https://evil.example/v1' } });
    assert.equal(moved.stored.llm.apiKey, undefined);
    assert.deepEqual(moved.cleared, ['llm.apiKey']);
    const embed = apply(empty(), { embedding: { provider: 'openai', apiKey: 'sk-embed-0123456789' } }).stored;
    assert.equal(apply(embed, { embedding: { baseUrl: 'https://other.example/v1' } }).stored.embedding.apiKey, undefined);
  });

  test('null clears a field or a section; the change lists field names only', () => {
    const a = apply(empty(), { llm: { provider: 'openai', apiKey: 'sk-live-abcdefghij1234' } });
    assert.deepEqual(a.changed.sort(), ['llm.apiKey', 'llm.provider']);
    assert.equal(apply(a.stored, { llm: { apiKey: null } }).stored.llm.apiKey, undefined);
    assert.deepEqual(apply(a.stored, { llm: null }).stored.llm, {});
    assert.ok(!JSON.stringify(a.changed).includes('abcdefghij'));
  });

  test('git hosts: a host keeps its own token when listed again without one; a new or re-typed host does not inherit it', () => {
    const a = apply(empty(), { git: { hosts: [{ host: 'Git.Acme.io', provider: 'gitlab', token: 'glpat-acme-0123456789' }] } }).stored;
    assert.equal(a.git.hosts![0].host, 'git.acme.io');
    const kept = apply(a, { git: { hosts: [{ host: 'git.acme.io', provider: 'gitlab' }, { host: 'ghe.acme.io', provider: 'github' }] } }).stored;
    assert.equal(box.open(kept.git.hosts![0].token!), 'glpat-acme-0123456789');
    assert.equal(kept.git.hosts![1].token, undefined);
    const retyped = apply(a, { git: { hosts: [{ host: 'git.acme.io', provider: 'github' }] } });
    assert.equal(retyped.stored.git.hosts![0].token, undefined);
    assert.deepEqual(retyped.cleared, ['git.hosts[0].token']);
  });
});

describe('gitTokenFor', () => {
  const git = apply(empty(), {
    git: { githubToken: 'ghp_github_0123456789', gitlabToken: 'glpat-gitlab-0123456789', hosts: [{ host: 'git.acme.io', provider: 'gitlab', token: 'glpat-acme-0123456789' }, { host: '127.0.0.1:8080', provider: 'github', token: 'ghp_local_0123456789' }] },
  }).stored.git;
  const at = (transport: string, host: string, port = '') => gitTokenFor(git, box, { transport, host, port });

  test('github.com and gitlab.com over https get their tokens; named hosts get their own', () => {
    assert.deepEqual(at('https', 'github.com'), { token: 'ghp_github_0123456789', provider: 'github' });
    assert.deepEqual(at('https', 'gitlab.com'), { token: 'glpat-gitlab-0123456789', provider: 'gitlab' });
    assert.deepEqual(at('https', 'git.acme.io'), { token: 'glpat-acme-0123456789', provider: 'gitlab' });
    assert.deepEqual(at('http', '127.0.0.1', '8080'), { token: 'ghp_local_0123456789', provider: 'github' });
  });

  test('no token for any other host, port, ssh, or plain http to github.com', () => {
    assert.equal(at('https', 'gitlab.acme.io'), undefined);
    assert.equal(at('https', 'github.com.evil.io'), undefined);
    assert.equal(at('http', '127.0.0.1', '8081'), undefined);
    assert.equal(at('ssh', 'github.com'), undefined);
    assert.equal(at('http', 'github.com'), undefined);
    assert.equal(at('https', 'bitbucket.org'), undefined);
  });
});

describe('resolveProviders: every fallback rule', () => {
  const r = (s: Partial<ProviderSettings['llm']>, e: Partial<ProviderSettings['embedding']> = {}) => resolveProviders({ llm: s as any, embedding: e as any });

  test('no provider: no LLM, no embedding, lexical', () => {
    const x = r({});
    assert.equal(x.llm, null);
    assert.equal(x.embedding, null);
    assert.match(x.embeddingNote, /lexical/);
  });

  test('vendors get their default endpoint and model', () => {
    assert.deepEqual(r({ provider: 'openai', apiKey: 'k1' }).llm, { provider: 'openai', api: 'openai', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini', apiKey: 'k1', keyFrom: 'llm' });
    assert.equal(r({ provider: 'anthropic', apiKey: 'k' }).llm?.baseUrl, 'https://api.anthropic.com');
    assert.equal(r({ provider: 'gemini', apiKey: 'k' }).llm?.api, 'gemini');
    assert.equal(r({ provider: 'custom', baseUrl: 'http://127.0.0.1:11434/v1/', model: 'llama3' }).llm?.baseUrl, 'http://127.0.0.1:11434/v1');
    assert.equal(r({ provider: 'custom', baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3' }).llm?.apiKey, null);
  });

  test('no embedding provider: openai and custom embed through the same OpenAI-compatible endpoint and key', () => {
    const o = r({ provider: 'openai', apiKey: 'k1' });
    assert.deepEqual(o.embedding, { provider: 'openai', api: 'openai', baseUrl: 'https://api.openai.com/v1', model: 'text-embedding-3-small', apiKey: 'k1', keyFrom: 'llm' });
    const c = r({ provider: 'custom', baseUrl: 'http://10.0.0.5:8000/v1', model: 'llama3', apiKey: 'k2' }, { model: 'nomic-embed-text' });
    assert.deepEqual(c.embedding, { provider: 'openai', api: 'openai', baseUrl: 'http://10.0.0.5:8000/v1', model: 'nomic-embed-text', apiKey: 'k2', keyFrom: 'llm' });
    const noModel = r({ provider: 'custom', baseUrl: 'http://10.0.0.5:8000/v1', model: 'llama3' });
    assert.equal(noModel.embedding, null);
    assert.match(noModel.embeddingNote, /embedding\.model/);
  });

  test("no embedding provider: gemini embeds through Gemini's API; anthropic leaves search lexical", () => {
    const g = r({ provider: 'gemini', apiKey: 'kg' });
    assert.deepEqual(g.embedding, { provider: 'gemini', api: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com/v1beta', model: 'text-embedding-004', apiKey: 'kg', keyFrom: 'llm' });
    const a = r({ provider: 'anthropic', apiKey: 'ka' });
    assert.equal(a.embedding, null);
    assert.match(a.embeddingNote, /Anthropic has no embeddings API/);
  });

  test("an embedding provider's own key wins", () => {
    const x = r({ provider: 'openai', apiKey: 'k1' }, { provider: 'openai', apiKey: 'k2' });
    assert.equal(x.embedding?.apiKey, 'k2');
    assert.equal(x.embedding?.keyFrom, 'embedding');
  });

  test("without its own key the embedding uses the LLM's key for the same vendor (same host)", () => {
    const x = r({ provider: 'gemini', apiKey: 'kg' }, { provider: 'gemini' });
    assert.equal(x.embedding?.apiKey, 'kg');
    assert.equal(x.embedding?.keyFrom, 'llm');
  });

  test("...or the same base URL host (custom LLM on api.openai.com, openai embeddings)", () => {
    const x = r({ provider: 'custom', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o', apiKey: 'k1' }, { provider: 'openai' });
    assert.equal(x.embedding?.apiKey, 'k1');
  });

  test('never for another vendor or host', () => {
    assert.equal(r({ provider: 'anthropic', apiKey: 'ka' }, { provider: 'openai' }).embedding?.apiKey, null);
    assert.equal(r({ provider: 'openai', apiKey: 'k1' }, { provider: 'gemini' }).embedding?.apiKey, null);
    // Same vendor but the embedding points elsewhere: the LLM's key does not follow it.
    const moved = r({ provider: 'openai', apiKey: 'k1' }, { provider: 'openai', baseUrl: 'https://proxy.acme.io/v1' });
    assert.equal(moved.embedding?.apiKey, null);
    assert.equal(moved.embedding?.keyFrom, null);
    assert.equal(r({ provider: 'custom', baseUrl: 'http://127.0.0.1:1/v1', model: 'm', apiKey: 'k' }, { provider: 'openai', baseUrl: 'http://127.0.0.1:2/v1' }).embedding?.apiKey, null, 'another port is another host');
  });

  test('openProviderSettings opens the sealed keys for the resolver', () => {
    const { stored } = apply(empty(), { llm: { provider: 'openai', apiKey: 'sk-live-abcdefghij1234' } });
    assert.equal(resolveProviders(openProviderSettings(stored, box)).embedding?.apiKey, 'sk-live-abcdefghij1234');
  });
});
