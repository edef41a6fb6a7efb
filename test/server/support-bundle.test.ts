/**
 * Issue 19: GET /api/support-bundle. Every kind of secret the installation holds is planted
 * (LLM and embedding keys, git tokens, Confluence credentials in a library spec, the licence key
 * in the environment, the admin password, API keys, session ids, the setup token file, the
 * sealing key file and the key environment variables), also where they should never be (job
 * logs, log lines), and the bundle's bytes are searched for each, raw and base64, in every
 * entry (unzipped with yauzl) and in the zip itself.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { unzip } from '../helpers/unzip.ts';
import { startApiServer, type ApiServer } from './helpers/api-server.ts';
import { createConsoleLogger, LogRing } from '../../core/services.ts';
import { createApiKey } from '../../server/access/api-keys.ts';
import type { LicenceView } from '../../server/access.ts';

const P = {
  llmKey: 'sk-planted-llm-key-5f1e2d3c4b5a69788796',
  embeddingKey: 'sk-planted-embedding-key-0a1b2c3d4e5f',
  embeddingPlain: 'emb-planted-plain-key-9a8b7c6d5e4f3a2b',
  githubToken: 'ghp_PlantedSettingsToken0123456789ABCDEF',
  gitlabToken: 'glpat-PlantedGitlabToken-xyz987654',
  confluenceToken: 'ATATT3xPlantedConfluenceToken-44d0c9a8',
  confluencePat: 'NjQ3PlantedConfluencePat0123456789abcd',
  licenceKey: 'rdk1.eyJsaWNlbnNlZSI6IlBsYW50ZWQifQ.PlantedLicenceSignature0123456789',
  adminPassword: 'Planted-Admin-Passw0rd!2026',
  sessionId: 'sess_PlantedSessionId0123456789abcdef',
  setupToken: 'setup-PlantedSetupToken-6e5d4c3b2a19',
  encryptionKey: 'PlantedEncryptionKeyValue0123456789abcdefXYZ=',
  refdeskSecretKey: 'PlantedRefdeskSecretKey0123456789abcdefghijk=',
  memberKey: '', // filled: a real member API key (full text)
  adminKey: '', // filled: the admin key that downloads the bundle
  sealingKey: '', // filled: DATA_DIR/secret.key's content
};

function forms(secret: string): string[] {
  const b64 = Buffer.from(secret).toString('base64');
  return [secret, b64, b64.replace(/=+$/, ''), Buffer.from(secret).toString('base64url'), encodeURIComponent(secret)];
}


describe('GET /api/support-bundle', { timeout: 60_000 }, () => {
  let s: ApiServer;
  let ring: LogRing;
  let entries: Map<string, Buffer>;
  let zipBytes: Buffer;

  before(async () => {
    ring = new LogRing(100);
    const licence: LicenceView = { expired: () => false, expiresAt: () => '2027-03-01T00:00:00.000Z' };
    const env = {
      LICENSE_KEY: P.licenceKey,
      ENCRYPTION_KEY: P.encryptionKey,
      REFDESK_SECRET_KEY: P.refdeskSecretKey,
      REFDESK_GIT_TOKEN: P.githubToken,
      CONFLUENCE_PAT: P.confluencePat,
      PORT: '3000',
      DATA_DIR: '/data',
      UNRELATED: 'not shown',
    };
    s = await startApiServer({
      app: {
        access: { licence },
        supportBundle: {
          env,
          logRing: ring,
          licenceSummary: () => ({ licensee: 'Planted Corp', plan: 'team', trial: false, expiresAt: '2027-03-01T00:00:00.000Z', state: 'valid' }),
          bundleSections: [{ name: 'audit', build: async () => [{ at: '2026-11-25T05:00:00Z', action: 'login', actor: 'admin', details: { password: P.adminPassword, cookie: `refdesk_session=${P.sessionId}` } }] }],
        },
      },
    });
    const { store } = s.kernel;
    const plans = { names: ['free'], defaultPlan: 'free' };
    P.adminKey = (await createApiKey(store, { name: 'ops', role: 'admin' }, plans)).key;
    P.memberKey = (await createApiKey(store, { name: 'ci', role: 'member' }, plans)).key;
    const seal = (v: string) => s.kernel.secrets.seal(v);
    seal('creates DATA_DIR/secret.key');
    P.sealingKey = readFileSync(join(s.dataDir, 'secret.key'), 'utf8').trim();
    writeFileSync(join(s.dataDir, 'setup-token'), P.setupToken + '\n', { mode: 0o600 });

    // Settings as the settings and auth engineers keep them (secrets sealed), plus plain ones.
    await store.setSetting('llm', { provider: 'openai', apiKey: seal(P.llmKey), model: 'gpt-x', baseUrl: 'https://llm.example.com/v1' });
    await store.setSetting('embedding', { provider: 'openai', apiKey: seal(P.embeddingKey), fallbackKey: P.embeddingPlain, model: 'emb-1' });
    await store.setSetting('git', { githubToken: seal(P.githubToken), gitlabToken: P.gitlabToken, hosts: ['git.example.com'] });
    await store.setSetting('admin', { username: 'admin', password: P.adminPassword, passwordHash: `scrypt$16384$${Buffer.from(P.adminPassword).toString('base64')}` });
    await store.setSetting('auth', { sessions: [{ id: P.sessionId, user: 'admin' }] });
    await store.setSetting('mcp.requireKey', true);

    // A Confluence library whose spec holds sealed credentials, and a job whose log leaks them.
    await store.upsertLibrary({
      id: '/confluence/eng',
      title: 'Engineering',
      source: { kind: 'confluence', spec: { baseUrl: 'https://acme.atlassian.net', space: 'ENG', email: 'writer@example.com', apiToken: seal(P.confluenceToken), pat: seal(P.confluencePat) } },
    });
    const job = await store.createJob({ libraryId: '/confluence/eng', version: '', kind: 'confluence' });
    for (const leak of [
      `fetched with token ${P.confluenceToken} and ${P.confluencePat}`,
      `llm said: key ${P.llmKey} rejected; embedding ${P.embeddingKey}`,
      `git clone using ${P.githubToken} / ${P.gitlabToken}`,
      `Basic ${Buffer.from(`writer@example.com:${P.confluenceToken}`).toString('base64')}`,
      `licence ${P.licenceKey}; sealing key ${P.sealingKey}; setup ${P.setupToken}`,
      `api keys ${P.memberKey} ${P.adminKey}`,
      `keys ${P.encryptionKey} ${P.refdeskSecretKey}`,
      'page 3 of 12 read',
    ]) await store.appendJobLog(job.id, 'info', leak);
    await store.updateJob(job.id, { state: 'failed', error: { code: 'invalid_source', message: `Confluence refused ${P.confluenceToken}` } });

    // Server log lines (the logger's generic redaction first, then the bundle's).
    const logger = createConsoleLogger('info', () => {}, { ring });
    logger.info('request', { cookie: `refdesk_session=${P.sessionId}`, authorization: `Bearer ${P.adminKey}` });
    logger.warn(`sign-in failed, password ${P.adminPassword}`);
    logger.warn(`a key passed as text ${P.memberKey}, encryption ${P.encryptionKey}, licence ${P.licenceKey}`);
    logger.info(`setup token written: ${P.setupToken}; session ${P.sessionId}; github ${P.githubToken}`);
    logger.info('Refdesk listening on http://127.0.0.1:3000');

    const res = await fetch(`${s.base}/api/support-bundle`, { headers: { authorization: `Bearer ${P.adminKey}` } });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('content-type'), 'application/zip');
    assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="refdesk-support-.*\.zip"$/);
    zipBytes = Buffer.from(await res.arrayBuffer());
    entries = await unzip(zipBytes);
  });

  after(async () => {
    await s?.close();
  });

  test('no planted secret in any entry or in the zip bytes, raw or base64', () => {
    const planted = Object.entries(P).filter(([, v]) => v.length >= 8);
    assert.equal(planted.length, Object.keys(P).length, 'every secret was planted');
    const failures: string[] = [];
    for (const [name, secret] of planted) {
      for (const f of forms(secret)) {
        if (zipBytes.includes(f)) failures.push(`${name} in the zip bytes`);
        for (const [entry, bytes] of entries) if (bytes.includes(f)) failures.push(`${name} (${f === secret ? 'raw' : 'encoded'}) in ${entry}`);
      }
    }
    assert.deepEqual(failures, []);
  });

  test('holds what a diagnosis needs', () => {
    const names = [...entries.keys()].sort();
    assert.deepEqual(names, [
      'refdesk-support/README.txt',
      'refdesk-support/audit.json',
      'refdesk-support/config.json',
      'refdesk-support/jobs.json',
      'refdesk-support/licence.json',
      'refdesk-support/server.log',
      'refdesk-support/settings.json',
      'refdesk-support/store.json',
      'refdesk-support/version.json',
    ]);
    const json = (n: string) => JSON.parse(entries.get(`refdesk-support/${n}`)!.toString('utf8'));
    const version = json('version.json');
    assert.equal(version.node, process.version);
    assert.equal(version.refdesk, JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version);
    assert.equal(typeof version.os.platform, 'string');

    const config = json('config.json');
    assert.equal(config.env.PORT, '3000');
    assert.equal(config.env.LICENSE_KEY, '[redacted]');
    assert.equal(config.env.ENCRYPTION_KEY, '[redacted]');
    assert.equal(config.env.UNRELATED, undefined);
    assert.equal(Array.isArray(config.config.plugins), true);

    const settings = json('settings.json');
    assert.equal(settings['mcp.requireKey'], true, 'flags under key-like names stay');
    assert.equal(settings.llm.model, 'gpt-x');
    assert.equal(settings.llm.apiKey, '[redacted]');
    assert.equal(settings.git.gitlabToken, '[redacted]');
    assert.deepEqual(settings.git.hosts, ['git.example.com']);
    assert.equal(settings.admin.username, 'admin');

    const licence = json('licence.json');
    assert.equal(licence.licensee, 'Planted Corp');
    assert.equal(licence.plan, 'team');
    assert.equal(licence.expiresAt, '2027-03-01T00:00:00.000Z');
    assert.equal(licence.expired, false);

    const store = json('store.json');
    assert.equal(store.totals.libraries, 1);
    assert.equal(store.libraries[0].id, '/confluence/eng');
    assert.equal(store.libraries[0].source.spec.apiToken, '[redacted]');
    assert.equal(store.libraries[0].source.spec.space, 'ENG');
    assert.equal(typeof store.disk.dataDirFiles['refdesk.sqlite'], 'number', 'the database file is listed with its size');
    assert.equal(typeof store.disk.segments.bytes, 'number');

    const jobs = json('jobs.json');
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0].log.some((l: { message: string }) => l.message === 'page 3 of 12 read'), true);
    assert.match(jobs[0].job.error.message, /Confluence refused \[redacted\]/);

    const log = entries.get('refdesk-support/server.log')!.toString('utf8');
    assert.match(log, /Refdesk listening on http:\/\/127\.0\.0\.1:3000/);
    assert.match(log, /sign-in failed, password \[redacted\]/);

    assert.equal(json('audit.json')[0].action, 'login');
  });

  test('anonymous: 401; a member key: 403; anonymous with the supportBundle permission On: 200', async () => {
    let res = await fetch(`${s.base}/api/support-bundle`);
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error, 'unauthorized');
    res = await fetch(`${s.base}/api/support-bundle`, { headers: { authorization: `Bearer ${P.memberKey}` } });
    assert.equal(res.status, 403);
    assert.equal((await res.json()).error, 'forbidden');
    await s.kernel.store.setSetting('anonymous', { supportBundle: true });
    try {
      res = await fetch(`${s.base}/api/support-bundle`);
      assert.equal(res.status, 200);
      const anon = await unzip(Buffer.from(await res.arrayBuffer()));
      assert.equal(anon.has('refdesk-support/store.json'), true);
    } finally {
      await s.kernel.store.setSetting('anonymous', undefined);
    }
  });
});
