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
import { licenceRoutes } from './routes/licence.ts';
import { uiRoutes } from './ui/index.ts';
import { jobRoutes, type JobRoutesOptions } from './routes/jobs.ts';
import { libraryRoutes } from './routes/libraries.ts';
import { parseRoutes } from './routes/parse.ts';
import { sourceRoutes } from './routes/sources.ts';
import { uploadRoutes } from './routes/upload.ts';
import { JobRunner } from './job-runner.ts';
import { onProviderSettingsPatched } from '../core/settings.ts';
import { mcpEndpoint, type McpEndpointOptions } from './mcp/http-endpoint.ts';
import { ServiceBackend } from './mcp/service-backend.ts';
import { createApiService, type ApiService } from './api/service.ts';
import { clientAddressOf, publicApiMiddleware } from './public-api.ts';
import { HostAllowList, parseAllowedHosts, type AllowedHost } from './allowed-hosts.ts';
import { Access, type AccessOptions } from './access.ts';
import { AuthService, type AuthOptions } from './auth/sessions.ts';
import { hostGuard } from './auth/host-guard.ts';
import { authRoutes } from './routes/auth.ts';
import { auditRoutes } from './routes/audit.ts';
import { audit } from './audit.ts';
import { settingsRoutes, type SettingsRouteOptions } from './routes/settings.ts';
import { setupRoutes, type SetupRouteOptions } from './routes/setup.ts';
import { healthMiddleware } from './routes/health.ts';
import { InstalledLicence } from './licence.ts';
import { supportBundleRoutes } from './routes/support-bundle.ts';
import type { SupportBundleOptions } from './support-bundle.ts';
import { parseTrustedProxies, trustedProxyMiddleware } from './trusted-proxies.ts';
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
  /** Session expiry and the failed sign-in delay (server/auth/sessions.ts); the rest comes from the kernel. */
  auth?: Pick<AuthOptions, 'idleMinutes' | 'absoluteHours' | 'sleep'>;
  /** /api/settings: the audit writer and the provider test's time limit. */
  settings?: SettingsRouteOptions;
  /** /api/setup: where it learns whether the factory credentials were changed. */
  setup?: SetupRouteOptions;
  /** The job event streams (heartbeat and progress intervals). */
  jobEvents?: JobRoutesOptions;
  /** Proxies whose X-Forwarded-* headers are believed, from TRUSTED_PROXIES (added to `server.trustedProxies`). */
  trustedProxies?: string;
  /** The support bundle's inputs (environment, log ring, licence summary, extra sections). */
  supportBundle?: SupportBundleOptions;
  /**
   * Context searches in worker threads (server/search-pool.ts); false: in the main thread. The
   * size defaults to the config's `query.workers` (0 turns the pool off), else the cores but one.
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
  /** The admin account's sign-in and sessions. */
  auth: AuthService;
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
  const proxies = parseTrustedProxies([...(kernel.config.server?.trustedProxies ?? []), ...(options.trustedProxies ?? '').split(',')], options.trustedProxies ? 'TRUSTED_PROXIES' : 'server.trustedProxies');
  // Koa reads X-Forwarded-Proto/Host only with `proxy`; trustedProxyMiddleware strips them from other peers.
  app.proxy = proxies.entries.length > 0;
  const jobs = new JobRunner(kernel);
  // A change of the provider settings (API or UI): new clients, and embed jobs for an embedder turned on or changed.
  onProviderSettingsPatched(kernel.store, () => jobs.providersChanged());
  const searchPool = createSearchPool(kernel, options.searchPool);
  // The self-retrieval check after each build searches in the pool too (off the event loop).
  jobs.searcher = searchPool;
  const service = createApiService(kernel, jobs, searchPool ?? undefined);
  const allowedHosts = [...parseAllowedHosts(kernel.config.server?.allowedHosts ?? [], 'server.allowedHosts'), ...(options.allowedHosts ?? [])];
  const hosts = new HostAllowList(allowedHosts);
  const auth = new AuthService(kernel.store, { dataDir: kernel.env.dataDir, clock: kernel.clock, hosts, ...options.auth }, async (ctx, e) => {
    await audit(kernel, { ...e, client: clientAddressOf(ctx) });
  });
  const access = new Access(kernel.store, service, { sessions: auth, ...options.access });
  app.use(errorMiddleware(kernel.logger));
  app.use(trustedProxyMiddleware(proxies));
  // Koa reports here what no middleware can catch: failures of the connection after the handler
  // (a client that resets it, a malformed chunked body). Those are the client's, logged at debug;
  // anything else is logged as the error it is (never Koa's default stderr printout).
  app.on('error', (e: NodeJS.ErrnoException) => {
    if (isClientConnectionError(e)) kernel.logger.debug('client connection error', { code: e.code, error: e.message });
    else kernel.logger.error('connection failed', { error: e.message, stack: e.stack });
  });
  app.use(
    healthMiddleware({
      store: kernel.store,
      dataDir: kernel.env.dataDir,
      jobsAlive: () => jobs.alive(),
      licence: options.access?.licence,
      minFreeDiskBytes: kernel.config.server?.minFreeDiskBytes ?? 100 * 1024 * 1024,
      storeKind: kernel.config.slots.store,
    }),
  );
  app.use(async (ctx, next) => {
    if (ctx.path === '/ping') {
      ctx.body = { status: 'ok', message: 'pong' };
      return;
    }
    await next();
  });
  app.use(hostGuard(hosts));
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
    addRoutes(service, { dataDir: kernel.env.dataDir, maxUploadBytes: kernel.config.api.maxOpenApiUploadBytes, access }),
    refreshRoutes(service, access),
    openApiRoutes(kernel),
    supportBundleRoutes(kernel, access, {
      licence: options.access?.licence,
      licenceSummary: () => {
        const l = options.access?.licence;
        if (!(l instanceof InstalledLicence)) return undefined;
        const { licensee, plan, trial, issuedAt, expiresAt } = l.payload;
        return { licensee, plan, trial, issuedAt, expiresAt, state: l.state() };
      },
      bundleSections: [{ name: 'audit.json', build: () => kernel.store.listAudit({ limit: 1000 }) }],
      ...options.supportBundle,
    }),
    adminRoutes(kernel, jobs, service, access, { maxUploadBytes: options.maxUploadBytes ?? 200 * 1024 * 1024 }),
    licenceRoutes(access, options.access?.licence),
    authRoutes(auth),
    auditRoutes(kernel, access),
    settingsRoutes(kernel, access, { audit: (e) => audit(kernel, e).then(() => {}), ...options.settings }),
    setupRoutes(kernel, access, { credentialsChanged: async () => (await kernel.store.getAdminAccount()) !== null, ...options.setup }),
    parseRoutes(kernel, service, jobs, access),
    uploadRoutes(kernel, service, jobs, access),
    libraryRoutes(kernel, service, access),
    sourceRoutes(kernel),
    jobRoutes(kernel, jobs, access, options.jobEvents),
    uiRoutes({ kernel, service, jobs, access, auth, licence: options.access?.licence }),
  ]) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return { app, jobs, service, access, auth, searchPool };
}

/** The search pool the options and config ask for (query.workers: 0 = none), sized to the cores but one by default. */
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
