/**
 * The worked example outside the tree (issue 23 item 8): examples/source-notion is its own
 * package (its package.json depends on "refdesk": "file:../.."; it imports only refdesk/core and
 * refdesk/testing). This runs its own node:test suite as a process, then a real `refdesk serve`
 * whose config `extends: default` and adds the Notion plugin by path: the library is added
 * through POST /api/v2/add/source/notion and answered through /api/v2/context, reading a
 * loopback server shaped like Notion's API. No network.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { linkRefdeskIntoExample, NOTION_EXAMPLE, ROOT } from '../helpers/notion-example.ts';
import { startFakeNotion, WORKSPACE, type FakeNotion } from '../../examples/source-notion/test/fake-notion.ts';
import { makeDataDir, removeDataDir, sleep, startServer, stopAll } from './refdesk-process.ts';

const TOKEN = 'secret_notion-e2e-7c1f0a9b22';
let notion: FakeNotion;
const dirs: string[] = [];
let kitPackage = '';

before(async () => {
  kitPackage = linkRefdeskIntoExample();
  notion = await startFakeNotion({ token: TOKEN, pages: WORKSPACE });
});
after(async () => {
  await stopAll();
  await notion?.close();
  for (const d of dirs) removeDataDir(d);
  if (kitPackage) rmSync(kitPackage, { recursive: true, force: true });
});

test("the example package's own tests pass (node --test, as its npm test runs them)", { timeout: 120_000 }, () => {
  const files = readdirSync(join(NOTION_EXAMPLE, 'test')).filter((f) => f.endsWith('.test.ts')).map((f) => join('test', f));
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT; // the child is a test run of its own
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', ...files], { cwd: NOTION_EXAMPLE, env, encoding: 'utf8', timeout: 110_000 });
  assert.equal(r.status, 0, r.stdout.slice(-4000) + r.stderr.slice(-2000));
  assert.match(r.stdout, /# fail 0/);
  assert.match(r.stdout, /# pass [1-9]/);
});

test("the example type-checks against refdesk/core's and refdesk/testing's types (its npm run typecheck)", { timeout: 180_000 }, () => {
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: NOTION_EXAMPLE, encoding: 'utf8', timeout: 170_000 });
  assert.equal(r.status, 0, r.stdout.slice(-4000) + r.stderr.slice(-2000));
});

test('refdesk serve with a config that extends default: add through /api/v2/add/source/notion, answer through /api/v2/context', { timeout: 180_000 }, async () => {
  const dir = makeDataDir('refdesk-notion-e2e-');
  dirs.push(dir);
  const config = join(dir, 'refdesk.yaml');
  writeFileSync(
    config,
    [
      'extends: default',
      'plugins:',
      `  - use: ${JSON.stringify(join(NOTION_EXAMPLE, 'src', 'index.ts'))}`,
      '    options:',
      '      notion:',
      `        apiUrl: ${JSON.stringify(notion.url)}`,
      '        pageSize: 2',
      'network:',
      "  allowHosts: ['127.0.0.1']",
      '',
    ].join('\n'),
  );
  const server = await startServer(join(dir, 'data'), 90_000, { REFDESK_CONFIG: config });
  const keyRes = await fetch(`${server.base}/api/admin/keys`, { method: 'POST', headers: { ...server.adminAuth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'notion-e2e' }) });
  assert.equal(keyRes.status, 201, await keyRes.clone().text());
  const key = ((await keyRes.json()) as { key: string }).key;
  const auth = { authorization: `Bearer ${key}` };

  const sources = (await (await fetch(`${server.base}/api/sources`)).json()) as { sources: Array<{ kind: string; secretFields: string[]; addUrl: string }> };
  const listed = sources.sources.find((s) => s.kind === 'notion');
  assert.ok(listed && sources.sources.some((s) => s.kind === 'git'), 'the Notion source beside the default distribution');
  assert.deepEqual(listed.secretFields, ['token']);

  const add = await fetch(`${server.base}${listed.addUrl}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ workspace: 'Acme Engineering', token: TOKEN }) });
  const added = (await add.json()) as { libraryId: string; jobId: string; message: string };
  assert.equal(add.status, 202, JSON.stringify(added));
  assert.equal(added.libraryId, '/notion/acme-engineering');
  assert.ok(added.jobId);

  const ask = (query: string) => fetch(`${server.base}/api/v2/context?${new URLSearchParams({ libraryId: added.libraryId, query })}`, { headers: auth });
  let answer = await ask('roll back a release');
  for (let i = 0; i < 200 && answer.status === 202; i++) {
    await sleep(250);
    answer = await ask('roll back a release');
  }
  const text = await answer.text();
  assert.equal(answer.status, 200, text);
  assert.match(text, /deployctl rollback --service billing --to previous/);
  const quotas = await (await ask('how many requests may an API key send')).text();
  assert.match(quotas, /600 requests a minute/);
  assert.ok(!text.includes(TOKEN) && !quotas.includes(TOKEN));
  assert.ok(notion.requests.some((r) => r.auth === `Bearer ${TOKEN}` && r.version === '2022-06-28'), 'the server read the loopback Notion with the token');

  // The plugin's own alias route (SourceDefinition.addRoutes), documented in /api/openapi.json.
  const alias = await fetch(`${server.base}/api/v2/add/notion`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ workspaceName: 'Acme Handbook', integrationToken: TOKEN, titleFilter: 'Deploy' }) });
  const aliased = (await alias.json()) as { libraryName: string; message: string };
  assert.equal(alias.status, 200, JSON.stringify(aliased));
  assert.equal(aliased.libraryName, '/notion/acme-handbook');
  assert.match(aliased.message, /from the notion source/);
  const doc = (await (await fetch(`${server.base}/api/openapi.json`)).json()) as { paths: Record<string, { post?: { operationId?: string } }> };
  assert.equal(doc.paths['/v2/add/notion']?.post?.operationId, 'addNotion');
  await server.stop();
});
