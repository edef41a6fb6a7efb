import Koa from 'koa';
import type { Kernel } from '../core/kernel.ts';
import { errorMiddleware } from './errors.ts';
import { searchRoutes } from './routes/search.ts';
import { contextRoutes } from './routes/context.ts';
import { policyRoutes } from './routes/policies.ts';
import { addRoutes } from './routes/add.ts';
import { refreshRoutes } from './routes/refresh.ts';
import { openApiRoutes } from './routes/openapi.ts';
import { adminRoutes } from './routes/admin.ts';
import { JobRunner } from './job-runner.ts';
import { mcpEndpoint, type McpEndpointOptions } from './mcp/http-endpoint.ts';
import { ServiceBackend } from './mcp/service-backend.ts';
import { createApiService, type ApiService } from './api/service.ts';
import { publicApiMiddleware } from './public-api.ts';
import { parseAllowedHosts, type AllowedHost } from './allowed-hosts.ts';
import { Access, type AccessOptions } from './access.ts';
import { SearchPool, type SearchPoolOptions } from './search-pool.ts';

export interface AppOptions {
  maxUploadBytes?: number;
  /** The /mcp endpoint: key requirement (public by default) and the bound host (DNS rebinding checks). */
  mcp?: McpEndpointOptions;
  /**
   * Hosts allowed besides the loopback names, from the environment (ALLOWED_HOSTS, parsed by
   * main.ts); added to the config's `server.allowedHosts`. Used by /mcp's Origin check.
   */
  allowedHosts?: readonly AllowedHost[];
  /** Sessions and licence for the operator's routes (server/access.ts). */
  access?: AccessOptions;
  /**
   * Context searches in worker threads (server/search-pool.ts); false: in the main thread. The
   * size defaults to the config's `query.workers` (0 turns the pool off), else the cores.
   */
  searchPool?: SearchPoolOptions | false;
}

export interface RefdeskApp {
  app: Koa;
  jobs: JobRunner;
  /** The public API as plain functions (for in-process callers such as the MCP endpoint). */
  service: ApiService;
  /** Who may do what on the operator's routes. */
  access: Access;
  /** The search workers (null: searches run in the main thread). Close it when the server stops. */
  searchPool: SearchPool | null;
}

/** Errors of a client's connection or framing (reset, aborted, malformed HTTP), not of the server. */
function isClientConnectionError(e: NodeJS.ErrnoException): boolean {
  const code = e.code ?? '';
  return code.startsWith('HPE_') || ['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED'].includes(code) || e.message === 'aborted';
}

/** Builds the Koa app over an opened kernel. Never listens (main.ts does). */
export function createApp(kernel: Kernel, options: AppOptions = {}): RefdeskApp {
  const app = new Koa();
  app.proxy = false;
  const jobs = new JobRunner(kernel);
  const searchPool = createSearchPool(kernel, options.searchPool);
  const service = createApiService(kernel, jobs, searchPool ?? undefined);
  const access = new Access(kernel.store, service, options.access);
  const allowedHosts = [...parseAllowedHosts(kernel.config.server?.allowedHosts ?? [], 'server.allowedHosts'), ...(options.allowedHosts ?? [])];
  app.use(errorMiddleware(kernel.logger));
  // Koa reports here what no middleware can catch: failures of the connection after the handler
  // (a client that resets it, a malformed chunked body). Those are the client's, logged at debug;
  // anything else is logged as the error it is (never Koa's default stderr printout).
  app.on('error', (e: NodeJS.ErrnoException) => {
    if (isClientConnectionError(e)) kernel.logger.debug('client connection error', { code: e.code, error: e.message });
    else kernel.logger.error('connection failed', { error: e.message, stack: e.stack });
  });
  app.use(async (ctx, next) => {
    if (ctx.path === '/ping') {
      ctx.body = { status: 'ok', message: 'pong' };
      return;
    }
    await next();
  });
  app.use(
    mcpEndpoint(new ServiceBackend(service), {
      onError: (e) => kernel.logger.warn('mcp request failed', { error: e.message }),
      // One principal, one bucket: a tool call counts like one REST request of the same client.
      rateLimit: async (key, client) => service.checkRateLimit(await service.authenticate(key ? { authorization: `Bearer ${key}` } : {}, client)).headers,
      allowedHosts,
      ...options.mcp,
      auth: {
        requireKey: () => service.mcpRequireKey(),
        verifyKey: (key) => service.authenticate({ authorization: `Bearer ${key}` }, 'key-check').then(() => true, () => false),
        ...options.mcp?.auth,
      },
    }),
  );
  app.use(publicApiMiddleware(service, { cacheMaxAgeSeconds: kernel.config.api.cacheMaxAgeSeconds }));
  for (const router of [
    searchRoutes(service),
    contextRoutes(service),
    policyRoutes(service, access),
    addRoutes(service, { dataDir: kernel.env.dataDir, maxUploadBytes: kernel.config.api.maxOpenApiUploadBytes }),
    refreshRoutes(service),
    openApiRoutes(),
    adminRoutes(kernel, jobs, service, access, { maxUploadBytes: options.maxUploadBytes ?? 200 * 1024 * 1024 }),
  ]) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return { app, jobs, service, access, searchPool };
}

/** The search pool the options and config ask for (query.workers: 0 = none), sized to the cores by default. */
function createSearchPool(kernel: Kernel, options: SearchPoolOptions | false | undefined): SearchPool | null {
  const workers = kernel.config.query.workers;
  if (options === false || (workers === 0 && options?.size === undefined)) return null;
  // The embedded store's segment budget, when it has one, is the workers' budget.
  const storeOptions = (kernel.store as { options?: { segmentCacheBytes?: number; indexCacheSize?: number } }).options;
  return new SearchPool(kernel.store, kernel.logger, {
    size: workers,
    cacheBytes: storeOptions?.segmentCacheBytes,
    cacheCount: storeOptions?.indexCacheSize,
    ...options,
  });
}
