import type { Kernel } from '../../core/kernel.ts';
import { createApiKey } from '../../server/access/api-keys.ts';

/**
 * A key of the most generous configured plan, for benchmark clients: they ask like a client of
 * the service would, and the anonymous rate limit must not cut a run short.
 */
export async function benchApiKey(kernel: Kernel): Promise<string> {
  const plans = kernel.config.rateLimits.plans;
  const plan = Object.keys(plans).sort((a, b) => plans[b].requests - plans[a].requests)[0];
  return (await createApiKey(kernel.store, { name: 'bench', plan }, { names: Object.keys(plans), defaultPlan: kernel.config.rateLimits.defaultPlan })).key;
}
