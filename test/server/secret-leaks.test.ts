/**
 * Issue 16 item 7: no upstream header or body text carries a credential to an API client, a job
 * log, the process log or a thrown error. Upstreams on 127.0.0.1 (a Confluence-shaped server, a
 * git smart-HTTP server) fail in several ways and plant the job's own credentials (and their
 * encodings) in status text, headers and bodies; every place a user or operator could read is
 * then searched for them.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kernel } from '../../core/kernel.ts';
import { createConsoleLogger } from '../../core/services.ts';
import { TEST_CLI_TOKEN, adminAuth } from './helpers/api-server.ts';
import type { SourceContext } from '../../core/contracts.ts';
import type { RefdeskApp } from '../../server/app.ts';
import { serveConfig, type ServedConfig } from '../helpers/served-config.ts';
import { startFakeConfluence, type FakeConfluence } from '../plugins/source-confluence/fake-confluence.ts';
import { makeSpace } from '../plugins/source-confluence/fixtures.ts';
import { gitFixture, type GitFixture } from '../plugins/source-git/helpers.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EMAIL = 'writer@example.com';
const API_TOKEN = 'ATATT3xFfGF0-PlantedCloudToken-77c1a9';
const PAT = 'NjQ3PlantedServerPat0123456789abcdef';
const GIT_TOKEN = 'ghp_PlantedGitToken0123456789ABCDEFabcd';
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** Every form of the planted credentials that must appear nowhere. */
const PLANTED = [
  API_TOKEN,
  PAT,
  GIT_TOKEN,
  b64(`${EMAIL}:${API_TOKEN}`),
  b64(API_TOKEN),
  b64(PAT),
  b64(`x-access-token:${GIT_TOKEN}`),
  b64(`git:${GIT_TOKEN}`),
  encodeURIComponent(API_TOKEN),
  'other-upstream-session-cookie-9f8e7d',
  'sk-other-bearer-from-upstream-5a4b3c2d1e',
];

/** What an upstream that echoes too much answers: the request's credentials everywhere. */
function echoing(req: IncomingMessage, body = true) {
  const auth = String(req.headers.authorization ?? '');
  const bare = auth.replace(/^\S+\s+/, '');
  return {
    statusText: `Denied ${bare}`,
    headers: {
      'www-authenticate': `Basic realm="${bare}"`,
      'set-cookie': 'session=other-upstream-session-cookie-9f8e7d; HttpOnly',
      'x-request-authorization': auth,
      'retry-after': '0',
    },
    ...(body
      ? {
          body: JSON.stringify({
            message: `Refused ${auth} (decoded ${Buffer.from(bare, 'base64').toString('latin1')}); Authorization: Bearer sk-other-bearer-from-upstream-5a4b3c2d1e`,
            token: bare,
            url: `https://${encodeURIComponent(API_TOKEN)}@example.com/?access_token=${bare}`,
          }),
        }
      : {}),
  };
}

describe('secrets planted by upstreams reach no client, job log, log line or error', { timeout: 180_000 }, () => {
  let served: ServedConfig;
  let kernel: Kernel;
  let refdesk: RefdeskApp;
  let base: string;
  let key: string;
  let git: GitFixture;
  const REPOS = ['401', '403', '500', '404', 'redirect'].map((s) => `acme/private-${s}`);
  const logLines: string[] = [];

  before(async () => {
    const plugin = (folder: string, options?: unknown) => ({ use: join(ROOT, 'plugins', folder, 'index.ts'), ...(options ? { options } : {}) });
    const config = {
      plugins: [
        plugin('store-embedded', { embedded: { flushIntervalMs: 50 } }),
        plugin('chunker-markdown'),
        plugin('source-confluence', { confluence: { maxAttempts: 2, retryBaseMs: 1, maxRetryWaitMs: 5 } }),
        plugin('source-git', { git: { attempts: 2, retryDelayMs: 1 } }),
      ],
      network: { allowHosts: ['127.0.0.1'] },
    };
    served = await serveConfig(config, { prefix: 'refdesk-leaks-', keyName: 'leaks', logger: createConsoleLogger('debug', (line) => logLines.push(line)), app: { access: { cliToken: TEST_CLI_TOKEN } } });
    ({ kernel, refdesk, base, key } = served);
    git = await gitFixture(Object.fromEntries(REPOS.map((r) => [`${r}.git`, GIT_TOKEN])));
    for (const r of REPOS) git.repo(r).commit({ 'docs/a.md': '# A\n\nSome text about widgets.\n' }).publish();
  });

  after(async () => {
    await served?.close();
    await git?.close();
  });

  function assertClean(where: string, text: string) {
    for (const p of PLANTED) assert.ok(!text.includes(p), `${where} contains the planted value ${p.slice(0, 12)}...:\n${text.slice(0, 3000)}`);
  }

  /** Adds over REST, runs the job, and checks every answer and record of it; returns the job's error message. */
  async function addAndCheck(route: string, body: Record<string, unknown>): Promise<string> {
    logLines.length = 0;
    const res = await fetch(`${base}/api/v2/add/${route}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const added = await res.text();
    assertClean('the add answer', added);
    assert.equal(res.status, 200, added);
    const { libraryName } = JSON.parse(added) as { libraryName: string };
    await refdesk.jobs.idle();
    const [job] = await kernel.store.listJobs({ libraryId: libraryName, limit: 1 });
    assert.equal(job.state, 'failed', JSON.stringify(job));
    const status = await (await fetch(`${base}/api/admin/jobs/${job.id}`, { headers: adminAuth })).text();
    assertClean('the job status answer (job and log)', status);
    const context = await (await fetch(`${base}/api/v2/context?${new URLSearchParams({ libraryId: libraryName, query: 'widgets' })}`, { headers: { authorization: `Bearer ${key}` } })).text();
    assertClean('the context answer', context);
    assertClean('the job log', JSON.stringify(await kernel.store.getJobLog(job.id)));
    assertClean('the process log', logLines.join('\n'));
    return job.error!.message;
  }

  /** Reads the source directly (no kernel redaction): its own errors and log lines must be clean. */
  async function readDirectly(kind: string, spec: Record<string, unknown>): Promise<string> {
    const { source } = kernel.sources.get(kind)!;
    const lines: string[] = [];
    const ctx: SourceContext = {
      libraryId: '/x/y',
      version: '',
      spec,
      signal: new AbortController().signal,
      previous: new Map(),
      suggestVersions: () => {},
      log: (_level, message) => lines.push(message),
      progress: (p) => lines.push(p.message ?? ''),
    };
    let thrown = '';
    try {
      for await (const _ of source.read(ctx)) void _;
    } catch (e) {
      thrown = `${(e as Error).message}\n${(e as Error).stack ?? ''}`;
    }
    assert.notEqual(thrown, '', 'the source read fails');
    assertClean(`the ${kind} source's own error and log`, `${thrown}\n${lines.join('\n')}`);
    return thrown;
  }

  const cloud = (wiki: FakeConfluence) => ({ siteUrl: `${wiki.origin}/wiki`, spaceKey: 'ENG', deployment: 'cloud', email: EMAIL, apiToken: API_TOKEN });
  const dc = (wiki: FakeConfluence) => ({ siteUrl: `${wiki.origin}/confluence`, spaceKey: 'ENG', deployment: 'server', personalAccessToken: PAT });
  /** A fake Confluence of its own for one test (its port makes the library ID unique). */
  async function fakeConfluence(t: { after(fn: () => Promise<void>): void }): Promise<FakeConfluence> {
    const wiki = await startFakeConfluence({ space: makeSpace(), email: EMAIL, apiToken: API_TOKEN, pat: PAT, context: '/confluence' });
    t.after(() => wiki.close());
    return wiki;
  }

  for (const [name, spec] of [['Cloud email + API token', cloud], ['Server personal access token', dc]] as const) {
    test(`Confluence ${name}: a 401 that echoes the credentials`, async (t) => {
      const wiki = await fakeConfluence(t);
      wiki.failNext(401, 1000, undefined, (req) => echoing(req));
      const message = await addAndCheck('confluence', spec(wiki));
      assert.match(message, /refused the credentials \(HTTP 401\)/);
      await readDirectly('confluence', spec(wiki));
    });

    test(`Confluence ${name}: 503s with credentials in status text, headers and body`, async (t) => {
      const wiki = await fakeConfluence(t);
      wiki.failNext(503, 1000, '0', (req) => echoing(req));
      const message = await addAndCheck('confluence', spec(wiki));
      assert.match(message, /HTTP 503/);
      await readDirectly('confluence', spec(wiki));
    });

    test(`Confluence ${name}: a non-JSON answer whose Content-Type carries the credentials`, async (t) => {
      const wiki = await fakeConfluence(t);
      wiki.failNext(200, 1000, undefined, (req) => ({
        headers: { 'content-type': `text/html; charset=utf-8; auth="${req.headers.authorization}"` },
        body: `<html>${req.headers.authorization}</html>`,
      }));
      const message = await addAndCheck('confluence', spec(wiki));
      assert.match(message, /did not answer .* with Confluence REST JSON \(got text\/html\)/);
      await readDirectly('confluence', spec(wiki));
    });
  }

  for (const status of [401, 403, 500, 404]) {
    test(`git with a token: HTTP ${status} replies that echo the token`, async () => {
      git.server.failNext(1000, status, (req) => ({ ...echoing(req), headers: { ...echoing(req).headers, 'content-type': 'text/plain' } }));
      const repo = `acme/private-${status}`;
      const message = await addAndCheck('repo/git', { docsRepoUrl: git.url(repo), gitToken: GIT_TOKEN });
      assert.match(message, /acme\/private/);
      await readDirectly('git', { url: git.url(repo), provider: 'git', token: GIT_TOKEN });
      git.server.failNext(0);
    });
  }

  test('git with a token: a redirect to a URL carrying the token', async () => {
    git.server.failNext(1000, 302, (req) => ({
      headers: { location: `http://x-access-token:${GIT_TOKEN}@127.0.0.1:1/acme/private.git?token=${GIT_TOKEN}` },
      body: `moved, ${req.headers.authorization}\n`,
    }));
    await addAndCheck('repo/git', { docsRepoUrl: git.url('acme/private-redirect'), gitToken: GIT_TOKEN });
    await readDirectly('git', { url: git.url('acme/private-redirect'), provider: 'git', token: GIT_TOKEN });
    git.server.failNext(0);
  });
});
