/**
 * A small documentation folder for the MCP tests (a made-up UI library, "Widgetry"), and the
 * MCP clients the tests drive: the SDK v1 client (2025-era protocol), and the SDK v2 client in
 * the 2025 era or pinned to the 2026-07-28 revision.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';

const PAGES: Record<string, string> = {
  'docs/getting-started.md': `# Getting started

Install Widgetry from the npm registry:

\`\`\`bash
npm install widgetry
\`\`\`

## Create your first widget

Call \`createWidget\` with a name and a root element, then mount it:

\`\`\`js
import { createWidget } from 'widgetry';

const w = createWidget('clock', { root: document.body });
w.mount();
\`\`\`
`,
  'docs/theming.md': `# Theming

Widgetry reads colours from a theme object. Pass \`theme\` to \`createWidget\` to change the palette.

## Dark mode

Set \`theme.mode\` to \`'dark'\` to switch every widget to the dark palette:

\`\`\`js
createWidget('clock', { theme: { mode: 'dark', accent: '#ff8800' } });
\`\`\`
`,
  'docs/errors.md': `# Error handling

Every failure of a widget raises a \`WidgetError\` with a \`code\` such as \`E_NO_ROOT\` when the
root element is missing.

\`\`\`js
try {
  createWidget('clock', {});
} catch (e) {
  if (e instanceof WidgetError && e.code === 'E_NO_ROOT') console.error('give a root element');
}
\`\`\`
`,
};

/** Writes the Widgetry docs under `dir` and returns the folder to index. */
export function writeWidgetryDocs(dir: string): string {
  const root = join(dir, 'widgetry-docs');
  for (const [rel, text] of Object.entries(PAGES)) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}

/** The three ways a client talks MCP in these tests. */
export type ClientKind = 'v1 SDK (2025 era)' | 'v2 SDK, 2025 era' | 'v2 SDK, 2026-07-28';
export const CLIENT_KINDS: readonly ClientKind[] = ['v1 SDK (2025 era)', 'v2 SDK, 2025 era', 'v2 SDK, 2026-07-28'];

/** The part of both SDKs' clients the tests use. */
export interface McpTestClient {
  listTools(): Promise<{ tools: Array<{ name: string; description?: string; inputSchema: { properties?: Record<string, unknown>; required?: string[] } }> }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<{ content?: unknown; isError?: boolean }>;
  close(): Promise<void>;
}

export function makeClient(kind: ClientKind): { client: McpTestClient; connect(transport: unknown): Promise<void>; protocolVersion(): string | undefined } {
  if (kind === 'v1 SDK (2025 era)') {
    const c = new ClientV1({ name: 'refdesk-test', version: '1.0.0' });
    return {
      client: c as unknown as McpTestClient,
      connect: (t) => c.connect(t as Parameters<ClientV1['connect']>[0]),
      // v1 does not expose the negotiated version; it speaks the 2025 era only.
      protocolVersion: () => '2025 era',
    };
  }
  const c = new ClientV2(
    { name: 'refdesk-test', version: '1.0.0' },
    { versionNegotiation: { mode: kind === 'v2 SDK, 2026-07-28' ? { pin: '2026-07-28' } : 'legacy' } },
  );
  return {
    client: c as unknown as McpTestClient,
    connect: (t) => c.connect(t as Parameters<ClientV2['connect']>[0]),
    protocolVersion: () => c.getNegotiatedProtocolVersion(),
  };
}

/** The text of a tool result (all its text blocks). */
export function resultText(r: { content?: unknown }): string {
  const blocks = Array.isArray(r.content) ? (r.content as Array<{ type: string; text?: string }>) : [];
  return blocks
    .filter((b) => b.type === 'text')
    .map((b) => b.text ?? '')
    .join('\n');
}
