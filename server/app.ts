import Koa from 'koa';
import type { Kernel } from '../core/kernel.ts';
import { errorMiddleware } from './errors.ts';
import { searchRoutes } from './routes/search.ts';
import { contextRoutes } from './routes/context.ts';
import { adminRoutes } from './routes/admin.ts';
import { JobRunner } from './job-runner.ts';
import { mcpEndpoint, type McpEndpointOptions } from './mcp/http-endpoint.ts';
import { KernelBackend } from './mcp/kernel-backend.ts';

export interface AppOptions {
  maxUploadBytes?: number;
  /** The /mcp endpoint: key requirement (public by default) and the bound host (DNS rebinding checks). */
  mcp?: McpEndpointOptions;
}

export interface RefdeskApp {
  app: Koa;
  jobs: JobRunner;
}

/** Builds the Koa app over an opened kernel. Never listens (main.ts does). */
export function createApp(kernel: Kernel, options: AppOptions = {}): RefdeskApp {
  const app = new Koa();
  app.proxy = false;
  const jobs = new JobRunner(kernel);
  app.use(errorMiddleware(kernel.logger));
  app.use(async (ctx, next) => {
    if (ctx.path === '/ping') {
      ctx.body = { status: 'ok', message: 'pong' };
      return;
    }
    await next();
  });
  app.use(mcpEndpoint(new KernelBackend(kernel), { onError: (e) => kernel.logger.warn('mcp request failed', { error: e.message }), ...options.mcp }));
  for (const router of [
    searchRoutes(kernel),
    contextRoutes(kernel),
    adminRoutes(kernel, jobs, { maxUploadBytes: options.maxUploadBytes ?? 200 * 1024 * 1024 }),
  ]) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return { app, jobs };
}
