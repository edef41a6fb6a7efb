/**
 * A deterministic OpenAI-compatible LLM on 127.0.0.1 for the reranker's tests and the bench's
 * plumbing: it reads the reranking prompt (plugins/reranker-llm/prompt.ts: a question and
 * numbered candidates) and answers {"ranking": [...]} as `rank` decides; by default, candidates
 * sharing the most words with the question first (ties keep their number order). It is not a
 * model: figures measured with it show plumbing and added latency, not quality.
 */
import type { TestContext } from 'node:test';
import { startVendorServer, vendorAnswer, type LlmCall, type ScriptedReply, type VendorServer } from './vendor-llm-server.ts';

export interface PromptCandidate {
  n: number;
  /** The candidate's head line after its number: title (where). */
  head: string;
  text: string;
}

export interface RerankPrompt {
  question: string;
  candidates: PromptCandidate[];
}

/** The question and candidates of a reranking prompt (the user message of a chat completion). */
export function readRerankPrompt(call: LlmCall): RerankPrompt {
  const messages: Array<{ role: string; content: string }> = call.body?.messages ?? [];
  const prompt = messages.find((m) => m.role === 'user')?.content ?? '';
  const question = /^Question: (.*)$/m.exec(prompt)?.[1] ?? '';
  const candidates: PromptCandidate[] = [];
  for (const line of prompt.split('\n')) {
    const head = /^\[(\d+)\] (.*)$/.exec(line);
    if (head) candidates.push({ n: Number(head[1]), head: head[2]!, text: '' });
    else if (line.startsWith('    ') && candidates.length) candidates[candidates.length - 1]!.text = line.trim();
  }
  return { question, candidates };
}

const words = (s: string) => new Set(s.toLowerCase().match(/[a-z0-9]{3,}/g) ?? []);

/** Candidates sharing the most words with the question first; ties in number order. */
export function overlapRanking(p: RerankPrompt): number[] {
  const q = words(p.question);
  const score = (c: PromptCandidate) => [...words(`${c.head} ${c.text}`)].filter((w) => q.has(w)).length;
  return [...p.candidates].sort((a, b) => score(b) - score(a) || a.n - b.n).map((c) => c.n);
}

export type LoopbackBehaviour = (prompt: RerankPrompt, call: LlmCall, n: number) => ScriptedReply | number[];

/** Starts the loopback LLM; `behaviour` returns a ranking (numbers) or a scripted reply. */
export async function startLoopbackLlm(t: TestContext | null, behaviour: LoopbackBehaviour = (p) => overlapRanking(p)): Promise<VendorServer> {
  const script = (call: LlmCall, n: number): ScriptedReply => {
    const out = behaviour(readRerankPrompt(call), call, n);
    return Array.isArray(out) ? { json: vendorAnswer('openai', JSON.stringify({ ranking: out }), call.body?.model ?? 'loopback') } : out;
  };
  return startVendorServer(t, 'openai', script);
}
