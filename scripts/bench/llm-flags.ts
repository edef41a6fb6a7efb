/**
 * The bench's LLM flags: measure reranked quality against any OpenAI-compatible endpoint.
 *
 *   npm run bench -- --questions Q.jsonl --llm-base-url http://127.0.0.1:11434/v1 --llm-model qwen2.5:7b [--llm-api-key ENV_VAR]
 *
 * The key is never given on the command line (it would land in shell history and process
 * lists): --llm-api-key names the environment variable that holds it. The endpoint is set as the
 * data directory's LLM (provider custom) through the same settings code the server uses; the
 * questions are then asked with fast=true (lexical) and without (reranked).
 */
import { applySettingsPatch } from '../../core/settings.ts';
import type { Kernel } from '../../core/kernel.ts';

export interface BenchLlm {
  baseUrl: string;
  model: string;
  apiKey: string | null;
  /** The environment variable the key came from (for the report), never the key. */
  keyFrom: string | null;
}

export const LLM_OPTIONS = {
  'llm-base-url': { type: 'string' },
  'llm-model': { type: 'string' },
  'llm-api-key': { type: 'string' },
} as const;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The LLM the flags name, or null without --llm-base-url; throws on a flag misuse. */
export function benchLlmFrom(values: { 'llm-base-url'?: string; 'llm-model'?: string; 'llm-api-key'?: string }, env: NodeJS.ProcessEnv): BenchLlm | null {
  const baseUrl = values['llm-base-url'];
  if (!baseUrl) {
    if (values['llm-model'] || values['llm-api-key']) throw new Error('--llm-model and --llm-api-key go with --llm-base-url.');
    return null;
  }
  const model = values['llm-model'];
  if (!model) throw new Error('--llm-base-url needs --llm-model (the model name the endpoint serves).');
  const name = values['llm-api-key'];
  if (name === undefined) return { baseUrl, model, apiKey: null, keyFrom: null };
  if (!ENV_NAME.test(name)) throw new Error('--llm-api-key takes the NAME of an environment variable holding the key (e.g. --llm-api-key OPENAI_API_KEY), never the key itself.');
  const apiKey = env[name];
  // The name is echoed only when it looks like one (a key pasted by mistake is not printed back).
  if (!apiKey) throw new Error(`--llm-api-key ${/^[A-Z_][A-Z0-9_]*$/.test(name) ? name : '(the given name)'}: that environment variable is not set.`);
  return { baseUrl, model, apiKey, keyFrom: name };
}

/** Sets the bench's LLM as the data directory's LLM (custom: any OpenAI-compatible endpoint). */
export async function configureBenchLlm(kernel: Kernel, llm: BenchLlm): Promise<void> {
  await applySettingsPatch(kernel, { llm: { provider: 'custom', baseUrl: llm.baseUrl, model: llm.model, ...(llm.apiKey ? { apiKey: llm.apiKey } : {}) } });
}
