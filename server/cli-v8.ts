/**
 * V8 settings for `refdesk add` when this process runs the ingest itself (no server holds the data
 * directory): one bounded run, then exit (issue 17).
 *
 * V8 optimizes a function with TurboFan, on its helper threads, once the function has used up an
 * "interrupt budget" of executed bytecode (67,584 by default in Node 20: tuned for long-lived
 * pages and servers). A `refdesk add` runs micromark's tokenizer, the mdast builder, the chunker,
 * the tokenizer and the index build once over one library, in up to three isolates (the main
 * thread, the chunk worker, the segment worker), each compiling its own copy: TurboFan was about
 * a fifth of python's CPU and a third of a small library's (docs/benchmark.md, ingest rounds 5
 * and 6). A budget of ADD_INTERRUPT_BUDGET optimizes fewer functions, those that stay hot longer:
 * the CPU of the 13 shared corpora's `refdesk add` fell by 13 - 15 % (round 6; python's did
 * not). The flag is process-wide, so the worker threads started afterwards have it too. A server
 * is not changed.
 */
import { setFlagsFromString } from 'node:v8';

/** Bytecode budget before V8 considers optimizing a function, in a `refdesk add` process. */
export const ADD_INTERRUPT_BUDGET = 1_000_000;

/** The V8 flags `refdesk add` sets for its run: none that node was started with already (execArgv). */
export function addRunV8Flags(execArgv: readonly string[]): string[] {
  if (execArgv.some((a) => /^--interrupt[-_]budget(=|$)/.test(a))) return [];
  return [`--interrupt-budget=${ADD_INTERRUPT_BUDGET}`];
}

/** Sets addRunV8Flags for this process (its worker threads included); returns them. */
export function tuneV8ForAdd(execArgv: readonly string[] = process.execArgv): string[] {
  const flags = addRunV8Flags(execArgv);
  for (const f of flags) setFlagsFromString(f);
  return flags;
}
