import Router from '@koa/router';
import type { Kernel } from '../../core/kernel.ts';
import { getContext, toContextJson, toContextText } from '../../core/query.ts';
import { optionalEnum, optionalInt, requiredString } from '../params.ts';

export function contextRoutes(kernel: Kernel): Router {
  const r = new Router();
  r.get('/api/v2/context', async (ctx) => {
    const libraryId = requiredString(ctx, 'libraryId');
    const query = requiredString(ctx, 'query');
    const type = optionalEnum(ctx, 'type', ['json', 'txt'] as const, 'txt');
    const tokens = optionalInt(ctx, 'tokens');
    const result = await getContext(kernel, { libraryId, query, tokens });
    if (type === 'json') {
      ctx.body = toContextJson(result);
    } else {
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = toContextText(result);
    }
  });
  return r;
}
