/**
 * `refdesk mcp`: Refdesk's MCP server as its own process, talking to a Refdesk server's REST API.
 *   --transport stdio   MCP over stdin/stdout for local clients (only MCP messages on stdout;
 *                       everything else goes to stderr).
 *   --transport http    MCP over Streamable HTTP on --host (127.0.0.1) and --port (3001), with /ping.
 * The Refdesk server is found as server-address.ts says; the key comes from --api-key or
 * REFDESK_API_KEY (prefer the variable: a command line is visible to other local users).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import Koa from 'koa';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { RefdeskError } from '../../core/errors.ts';
import { createConsoleLogger } from '../../core/services.ts';
import { errorMiddleware } from '../errors.ts';
import type { ProcessSettings } from '../env.ts';
import { HttpBackend } from './http-backend.ts';
import { mcpEndpoint } from './http-endpoint.ts';
import { serverAddress } from './server-address.ts';
import { createRefdeskMcpServer } from './tools.ts';

export const MCP_USAGE = `Usage: refdesk mcp [--transport stdio|http] [options]

  --transport stdio        MCP over stdin/stdout, for local MCP clients (default)
  --transport http         MCP over Streamable HTTP at http://<host>:<port>/mcp
  --port N                 HTTP port (default 3001; 0 picks a free one)
  --host H                 HTTP address to bind (default 127.0.0.1)
  --server URL             the Refdesk server to query (default: REFDESK_URL, else the server
                           running on DATA_DIR, found through its lock file)
  --api-key KEY            API key sent to the Refdesk server (prefer REFDESK_API_KEY: a command
                           line is visible to other users of the machine)
`;

/** Runs the command; resolves -1 while it serves (the process keeps running), or an exit code. */
export async function runMcpCommand(argv: string[], settings: ProcessSettings, env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    allowPositionals: false,
    strict: true,
    options: {
      transport: { type: 'string', default: 'stdio' },
      port: { type: 'string' },
      host: { type: 'string' },
      server: { type: 'string' },
      'api-key': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(MCP_USAGE);
    return 0;
  }
  const transport = values.transport;
  if (transport !== 'stdio' && transport !== 'http') throw new RefdeskError('invalid_request', `mcp: --transport must be stdio or http (got "${String(transport).slice(0, 20)}").`);
  if (transport === 'stdio' && (values.port !== undefined || values.host !== undefined)) {
    throw new RefdeskError('invalid_request', 'mcp: --port and --host apply to --transport http only.');
  }
  const apiKey = (values['api-key'] ?? env.REFDESK_API_KEY)?.trim() || undefined;
  const address = serverAddress({ flag: values.server, env: env.REFDESK_URL, dataDir: settings.dataDir });
  const backend = new HttpBackend({ baseUrl: () => address.resolve(), defaultApiKey: apiKey });
  return transport === 'stdio' ? serveOverStdio(backend, apiKey, address.describe()) : serveOverHttp(backend, apiKey, address.describe(), values.host, values.port);
}

async function serveOverStdio(backend: HttpBackend, apiKey: string | undefined, where: string): Promise<number> {
  const handle = serveStdio(() => createRefdeskMcpServer(backend, { apiKey }), {
    onerror: (e) => process.stderr.write(`refdesk mcp: ${e.message}\n`),
  });
  process.stderr.write(`Refdesk MCP server on stdio, answering from ${where}${apiKey ? ' with an API key' : ''}.\n`);
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    void handle.close().finally(() => process.exit(0));
  };
  // The client closing our stdin ends the session (the MCP stdio binding asks servers to exit then).
  process.stdin.once('end', stop);
  process.stdin.once('close', stop);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return -1;
}

async function serveOverHttp(backend: HttpBackend, apiKey: string | undefined, where: string, hostOpt?: string, portOpt?: string): Promise<number> {
  const host = hostOpt?.trim() || '127.0.0.1';
  const portRaw = portOpt ?? '3001';
  if (!/^\d{1,5}$/.test(portRaw) || Number(portRaw) > 65535) throw new RefdeskError('invalid_request', 'mcp: --port must be a number from 0 to 65535.');
  const logger = createConsoleLogger('warn');
  const app = new Koa();
  app.use(errorMiddleware(logger));
  app.use(async (ctx, next) => {
    if (ctx.path === '/ping') {
      ctx.body = { status: 'ok', message: 'pong' };
      return;
    }
    await next();
  });
  app.use(mcpEndpoint(backend, { bindHost: host, defaultApiKey: apiKey, onError: (e) => logger.warn('mcp request failed', { error: e.message }) }));
  const server = createServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(e.code === 'EADDRINUSE' ? new RefdeskError('invalid_request', `mcp: port ${portRaw} is in use; choose another with --port.`) : e),
    );
    server.listen(Number(portRaw), host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  process.stdout.write(`Refdesk MCP listening on http://${shown}:${port}/mcp (answering from ${where})\n`);
  const stop = () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return -1;
}
