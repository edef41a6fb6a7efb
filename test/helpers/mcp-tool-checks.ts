/**
 * The behaviour every Refdesk MCP connection must show, whatever the transport and protocol era:
 * the tool listing, both tools and the legacy name, the argument aliases, and tool errors.
 * Registers node:test tests in the calling describe block; the library is the Widgetry docs
 * (test/helpers/mcp-docs.ts) indexed as /docs/widgetry.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resultText, type McpTestClient } from './mcp-docs.ts';

export interface ToolChecksOptions {
  /** The trust line expected for /docs/widgetry in resolve-library-id. */
  trust: RegExp;
}

export function toolBehaviourTests(client: () => McpTestClient, opts: ToolChecksOptions): void {
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await client().callTool({ name, arguments: args });
    return { isError: r.isError === true, text: resultText(r) };
  };
  const ok = async (name: string, args: Record<string, unknown>) => {
    const r = await call(name, args);
    assert.equal(r.isError, false, `${name} ${JSON.stringify(args)} failed: ${r.text}`);
    return r.text;
  };
  const fails = async (name: string, args: Record<string, unknown>, ...messages: RegExp[]) => {
    const r = await call(name, args);
    assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} should be a tool error, answered: ${r.text.slice(0, 300)}`);
    for (const m of messages) assert.match(r.text, m);
  };

  test('lists the three tools with schemas and guidance for the model', async () => {
    const { tools } = await client().listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['get-library-docs', 'query-docs', 'resolve-library-id']);
    const by = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.deepEqual(by['resolve-library-id'].inputSchema.required?.sort(), ['libraryName', 'query']);
    assert.deepEqual(by['query-docs'].inputSchema.required?.sort(), ['libraryId', 'query']);
    assert.ok(by['query-docs'].inputSchema.properties?.tokens, 'query-docs takes tokens');
    assert.deepEqual(by['get-library-docs'].inputSchema.required, ['context7CompatibleLibraryID']);
    assert.ok(by['get-library-docs'].inputSchema.properties?.topic);
    assert.match(by['resolve-library-id'].description ?? '', /BEFORE query-docs.*unless the user already gave a library ID/s);
    assert.match(by['query-docs'].description ?? '', /ONE concept per call/);
    assert.match(by['get-library-docs'].description ?? '', /Older name of query-docs/);
  });

  test('resolve-library-id lists the matching library with its details', async () => {
    const text = await ok('resolve-library-id', { libraryName: 'widgetry', query: 'how do I enable dark mode' });
    assert.match(text, /^- Title: Widgetry$/m);
    assert.match(text, /^- Library ID: \/docs\/widgetry$/m);
    assert.match(text, /^- Description: Widgetry UI widgets$/m);
    assert.match(text, /^- Code snippets: [1-9]\d*$/m);
    assert.match(text, opts.trust);
    assert.match(text, /call query-docs with its Library ID/);
    // Only the name, as older prompts send it; and the query under an alias.
    assert.match(await ok('resolve-library-id', { libraryName: 'widgetry' }), /Library ID: \/docs\/widgetry/);
    assert.match(await ok('resolve-library-id', { libraryName: 'Widgetry', userQuery: 'themes' }), /Library ID: \/docs\/widgetry/);
  });

  test('resolve-library-id says so when nothing matches', async () => {
    const text = await ok('resolve-library-id', { libraryName: 'zzqx-nothing', query: 'anything' });
    assert.match(text, /No library on this Refdesk server matches "zzqx-nothing"/);
  });

  test('query-docs answers from the documentation, with sources', async () => {
    const text = await ok('query-docs', { libraryId: '/docs/widgetry', query: 'how do I switch to dark mode' });
    assert.match(text, /Source: docs\/theming\.md \(lines \d+-\d+\)/);
    assert.match(text, /mode: 'dark'/);
  });

  test('get-library-docs, the older name, is served by the same code', async () => {
    const text = await ok('get-library-docs', { context7CompatibleLibraryID: '/docs/widgetry', topic: 'WidgetError codes', tokens: 2000 });
    assert.match(text, /E_NO_ROOT/);
    assert.match(text, /Source: docs\/errors\.md/);
    // Without a topic: an overview of the library.
    assert.match(await ok('get-library-docs', { context7CompatibleLibraryID: '/docs/widgetry' }), /Source: docs\//);
  });

  test('argument aliases that clients send are accepted', async () => {
    assert.match(await ok('query-docs', { libraryID: '/docs/widgetry', userQuery: 'dark mode theme' }), /docs\/theming\.md/);
    assert.match(await ok('query-docs', { libraryName: '/docs/widgetry', question: 'WidgetError E_NO_ROOT' }), /docs\/errors\.md/);
    assert.match(await ok('query-docs', { context7CompatibleLibraryID: '/docs/widgetry', query: 'npm install widgetry', tokens: '1500' }), /getting-started\.md/);
    assert.match(await ok('get-library-docs', { libraryId: '/docs/widgetry', query: 'dark mode' }), /docs\/theming\.md/);
  });

  test('errors come back as tool errors that say what to do', async () => {
    await fails('query-docs', { libraryId: '/docs/nothing-here', query: 'dark mode' }, /"\/docs\/nothing-here" not found/, /Call resolve-library-id/);
    await fails('query-docs', { libraryId: 'widgetry', query: 'dark mode' }, /Invalid library ID "widgetry"/, /A library ID is a path such as \/owner\/repo.*resolve-library-id/);
    await fails('get-library-docs', { context7CompatibleLibraryID: 'not an id', topic: 'x' }, /Invalid library ID/);
    await fails('query-docs', { libraryId: '/docs/widgetry', query: '   ' }, /"query" must not be empty/);
    await fails('query-docs', { libraryId: '/docs/widgetry' }, /"query" is required/);
    await fails('query-docs', { query: 'dark mode' }, /"libraryId" is required/);
    await fails('query-docs', { libraryId: '/docs/widgetry', query: 'x', tokens: -5 }, /"tokens" must be a positive whole number/);
    await fails('query-docs', { libraryId: '/docs/widgetry@v9.9.9', query: 'dark mode' }, /Version "v9\.9\.9"/, /resolve-library-id/);
    await fails('resolve-library-id', { libraryName: '  ', query: 'x' }, /"libraryName" must not be empty/);
    // The connection survives the errors.
    assert.match(await ok('query-docs', { libraryId: '/docs/widgetry', query: 'dark mode' }), /theming/);
  });
}
