/**
 * `refdesk migrate-store` moves vectors and the raw uploads of queued jobs (issue 24), as real
 * processes: a data directory whose libraries were added with an embedder configured (a loopback
 * server shaped like OpenAI's embeddings API, its key planted in the sealed settings) has snippet
 * vectors (files) and library-search vectors, and one library whose OpenAPI upload job is still
 * queued. It moves to PostgreSQL (a throwaway cluster of Debian's server; vectors in
 * `vector_chunks` rows, as without pgvector, and `library_vectors`) and from there to a fresh data
 * directory. On each: the hybrid context answers and the library search are byte-identical to the
 * source's, no `embed` job is queued and no snippet is embedded again (only the questions are),
 * and the queued upload job runs to success there. The planted key appears in no output or log.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { makeDataDir, removeDataDir, runRefdesk, sleep, startServer, stopAll, httpGet, type CliResult, type RefdeskServer } from '../e2e/refdesk-process.ts';
import { postgresSkipReason, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startOpenAiEmbeddings, type EmbeddingServer } from '../helpers/embedding-servers.ts';
import { startServer as startRouteServer, type TestServer } from '../helpers/route-server.ts';
import { EmbeddedStore } from '../../plugins/store-embedded/embedded-store.ts';
import { dataDirSecretBox } from '../../core/secrets.ts';
import { patchSettings } from '../../core/settings.ts';
import { createConsoleLogger, systemClock } from '../../core/services.ts';

const show = (r: CliResult) => `exit ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
const KEY = `sk-planted${randomBytes(12).toString('hex')}`;
const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const MODEL = 'loopback-hash';

const DOCS: Record<string, Record<string, string>> = {
  router: {
    'routing.md': '# Routing\n\nRoutes map a path to a handler.\n\n## Parameters\n\nNamed parameters are read from ctx.params.\n\n```js\nrouter.get("/users/:id", (ctx) => { ctx.body = ctx.params.id; });\n```\n',
    'middleware.md': '# Middleware\n\nRouter middleware runs before the route handler; call next() to continue.\n',
  },
  cookies: {
    'cookies.md': '# Cookies\n\nRead and set cookies with ctx.cookies; signed cookies need app.keys.\n\n## Options\n\nmaxAge, httpOnly, sameSite and secure are set per cookie.\n',
    'sessions.md': '# Sessions\n\nA session is kept in a signed cookie or an external store.\n',
  },
  queue: {
    'jobs.md': '# Jobs\n\nA job queue retries failed jobs with backoff.\n\n## Workers\n\nEach worker takes one job at a time from the queue.\n',
    'events.md': '# Events\n\nListen to completed and failed events on the queue.\n',
  },
};
const QUESTIONS: Array<[string, string]> = [
  ['/docs/router', 'route parameters'],
  ['/docs/cookies', 'signed cookie options'],
  ['/docs/queue', 'retry a failed job'],
];
const SEARCHES = [
  ['router', 'path parameters'],
  ['queue', 'background workers'],
];
const OPENAPI = JSON.stringify({
  openapi: '3.0.0',
  info: { title: 'Pets', version: '1.0.0', description: 'A pet store.' },
  paths: { '/pets': { get: { summary: 'List pets', description: 'Returns every pet in the store.', responses: { '200': { description: 'The pets.' } } } } },
});

function openStore(dataDir: string): EmbeddedStore {
  return new EmbeddedStore({}, { env: { dataDir, mode: 'writer' }, logger: createConsoleLogger('error'), clock: systemClock });
}

interface Jobs {
  jobs: Array<{ id: string; kind: string; state: string; libraryId: string }>;
}

async function listJobs(server: RefdeskServer): Promise<Jobs['jobs']> {
  const r = await httpGet(`${server.base}/api/jobs`, 15_000, server.adminAuth);
  assert.equal(r.status, 200, r.text);
  return (r.body.jobs ?? r.body) as Jobs['jobs'];
}

/** The texts of the embedding requests from the `from`th on, except the pets library's (its job's). */
function embeddedTexts(vendor: EmbeddingServer, from: number): string[] {
  return vendor.bodies
    .slice(from)
    .flatMap((b) => (typeof b.input === 'string' ? [b.input] : (b.input as string[])))
    .filter((t) => !/pet/i.test(t));
}

/**
 * A gate in front of the embedding server: while `hold` is set, requests embedding the pets
 * library's texts wait (so its queued job cannot finish, and its vector join the library search,
 * while the answers are compared); everything else passes straight through.
 */
async function startGate(vendor: EmbeddingServer): Promise<TestServer & { hold: boolean; release(): void }> {
  let waiting: Array<() => void> = [];
  let gate: TestServer & { hold: boolean; release(): void };
  const server = await startRouteServer(async (req, res, url) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    if (gate.hold && /pet/i.test(body)) await new Promise<void>((r) => waiting.push(r));
    const upstream = await fetch(`${vendor.base}${url.pathname}`, { method: req.method, headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' }, body });
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
    res.end(await upstream.text());
  });
  gate = Object.assign(server, {
    hold: false,
    release() {
      gate.hold = false;
      for (const r of waiting) r();
      waiting = [];
    },
  });
  return gate;
}

/**
 * One answer whose question was embedded: a question whose embedding took longer than the
 * server's limit (3 s, core/hybrid.ts; possible on a loaded machine's first question) is answered
 * lexically and logged as such, and is asked again.
 */
async function hybridAnswer(server: RefdeskServer, url: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const [err, out] = [server.stderr().length, server.stdout().length];
    const r = await httpGet(url);
    assert.equal(r.status, 200, r.text);
    await sleep(100); // the child's log line, written before its answer, may arrive after it
    if (!/could not be embedded/.test(server.stderr().slice(err) + server.stdout().slice(out))) return r.text;
    if (attempt >= 4) assert.fail(`the question of ${url} was never embedded in time`);
    await sleep(500);
  }
}

/** The answers (raw bodies) and the texts the embedder was asked for while they were computed (not the pets job's). */
async function answers(server: RefdeskServer, vendor: EmbeddingServer): Promise<{ bodies: string[]; embedded: string[] }> {
  const before = vendor.bodies.length;
  const bodies: string[] = [];
  for (const [id, q] of QUESTIONS) bodies.push(await hybridAnswer(server, `${server.base}/api/v2/context?libraryId=${encodeURIComponent(id)}&query=${encodeURIComponent(q)}&type=json`));
  for (const [name, q] of SEARCHES) bodies.push(await hybridAnswer(server, `${server.base}/api/v2/libs/search?libraryName=${encodeURIComponent(name)}&query=${encodeURIComponent(q)}`));
  return { bodies, embedded: embeddedTexts(vendor, before) };
}

/** Waits until the job of `libraryId` has ended; its state. */
async function jobEnd(server: RefdeskServer, libraryId: string): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const job = (await listJobs(server)).find((j) => j.libraryId === libraryId);
    if (job && job.state !== 'queued' && job.state !== 'running') return job.state;
    await sleep(100);
  }
  assert.fail(`the job of ${libraryId} did not end`);
}

describe('refdesk migrate-store: vectors and queued uploads', { timeout: 900_000, skip: postgresSkipReason() }, () => {
  const dirs: string[] = [];
  let vendor: EmbeddingServer;
  let gate: Awaited<ReturnType<typeof startGate>>;
  let postgres: TestPostgres;
  let source: string;
  let original: { bodies: string[]; embedded: string[] };
  const outputs: string[] = [];
  const dir = (prefix: string) => {
    const d = makeDataDir(prefix);
    dirs.push(d);
    return d;
  };

  before(async () => {
    vendor = await startOpenAiEmbeddings(undefined, { key: KEY });
    gate = await startGate(vendor);
    postgres = await startPostgres();
    source = dir('refdesk-mvec-src-');
    writeFileSync(join(source, 'secret.key'), randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
    const store = openStore(source);
    await store.open();
    await patchSettings(store, dataDirSecretBox(source, null), { embedding: { provider: 'openai', baseUrl: `${gate.base}/v1`, apiKey: KEY, model: MODEL } });
    await store.close();
    const docs = dir('refdesk-mvec-docs-');
    for (const [name, files] of Object.entries(DOCS)) {
      mkdirSync(join(docs, name));
      for (const [file, text] of Object.entries(files)) writeFileSync(join(docs, name, file), text);
      const r = await runRefdesk(['add', join(docs, name), '--name', name], source, 300_000);
      assert.equal(r.code, 0, show(r));
      outputs.push(r.stdout, r.stderr);
    }
    assert.ok(vendor.embeddedTexts > 0, 'the libraries were embedded at add');
    assert.equal(readdirSync(join(source, 'vectors', 'libraries')).length, 3, 'one library-search vector per library');

    const server = await startServer(source, 120_000);
    try {
      assert.deepEqual((await listJobs(server)).filter((j) => j.kind === 'embed'), [], 'the source needs no embed job');
      original = await answers(server, vendor);
      outputs.push(server.stdout(), server.stderr());
    } finally {
      await server.stop();
    }
    assert.equal(new Set(original.embedded).size, QUESTIONS.length + SEARCHES.length, `each question embedded (the answers are hybrid): ${original.embedded.join(' | ')}`);

    // A library whose OpenAPI upload job is still queued (the server was stopped before it ran).
    const name = `${randomUUID()}.json`;
    mkdirSync(join(source, 'uploads'), { recursive: true });
    writeFileSync(join(source, 'uploads', name), OPENAPI);
    const s2 = openStore(source);
    await s2.open();
    await s2.upsertLibrary({ id: '/upload/pets', title: 'Pets', source: { kind: 'openapi', spec: { path: join(source, 'uploads', name) } } });
    await s2.createJob({ libraryId: '/upload/pets', version: '', kind: 'add' });
    await s2.close();
  });
  after(async () => {
    await stopAll();
    await postgres?.stop();
    await gate?.close();
    await vendor?.close();
    for (const d of dirs) removeDataDir(d);
  });

  test('to PostgreSQL and on to a data directory: the same hybrid answers with no embed job, and the queued upload job runs', async () => {
    const url = await postgres.createDatabase('migrate_vectors');
    const to = await runRefdesk(['migrate-store', '--from', source, '--to', url], source, 600_000, { ENCRYPTION_KEY });
    assert.equal(to.code, 0, show(to));
    outputs.push(to.stdout, to.stderr);
    assert.match(to.stdout, /3 served versions \(\d+ snippets\), 3 with their snippet vectors/);
    assert.match(to.stdout, /3 library-search vectors/);
    assert.match(to.stdout, /1 raw upload of jobs still to run/);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const counts = (await client.query('SELECT (SELECT count(*) FROM library_vectors)::int AS libs, (SELECT count(*) FROM uploads)::int AS uploads, (SELECT count(*) FROM builds WHERE embedding_checksum IS NOT NULL)::int AS builds')).rows[0];
      assert.deepEqual(counts, { libs: 3, uploads: 1, builds: 3 });
    } finally {
      await client.end();
    }

    // On to a data directory before any node ran the queued job: its upload moves again.
    const back = dir('refdesk-mvec-back-');
    const from = await runRefdesk(['migrate-store', '--from', url, '--to', back], source, 600_000, { ENCRYPTION_KEY });
    assert.equal(from.code, 0, show(from));
    outputs.push(from.stdout, from.stderr);
    assert.match(from.stdout, /3 with their snippet vectors/);
    assert.match(from.stdout, /3 library-search vectors/);
    assert.match(from.stdout, /1 raw upload of jobs still to run/);
    assert.equal(readdirSync(join(back, 'uploads')).length, 1);

    const ends: Array<[string, string, Record<string, string>]> = [
      ['a node on PostgreSQL', dir('refdesk-mvec-node-'), { DATABASE_URL: url, ENCRYPTION_KEY }],
      ['the data directory moved back', back, {}],
    ];
    for (const [what, dataDir, env] of ends) {
      gate.hold = true;
      const started = vendor.bodies.length;
      const server = await startServer(dataDir, 120_000, env);
      try {
        const moved = await answers(server, vendor);
        assert.deepEqual(moved.bodies, original.bodies, `${what}: the same answers`);
        assert.deepEqual([...new Set(embeddedTexts(vendor, started))].sort(), [...new Set(original.embedded)].sort(), `${what}: only the questions were embedded, no snippet again`);
        gate.release();
        assert.equal(await jobEnd(server, '/upload/pets'), 'succeeded', `${what}: the queued upload job ran`);
        const pets = await httpGet(`${server.base}/api/v2/context?libraryId=/upload/pets&query=list+pets`);
        assert.equal(pets.status, 200, pets.text);
        assert.match(pets.text, /List pets/);
        assert.deepEqual((await listJobs(server)).filter((j) => j.kind === 'embed'), [], `${what}: no embed job was queued`);
        outputs.push(server.stdout(), server.stderr());
      } finally {
        gate.release();
        await server.stop();
      }
    }
    assert.ok(existsSync(join(back, 'vectors', 'libraries')), 'library-search vectors are files in a data directory');
    for (const out of outputs) assert.ok(!out.includes(KEY), 'the planted embedding key was printed');
  });
});
