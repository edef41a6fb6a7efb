/** Spaces the starts of requests to one host by at least a delay (politeness). */
export class HostThrottle {
  /** The start of the last request booked per host. */
  private readonly last = new Map<string, number>();

  /**
   * Resolves when a request to `host` may start (`delayMs` after the last one booked, so a
   * delay learnt later, e.g. from robots.txt, applies at once) and books that slot; rejects when
   * `signal` aborts.
   */
  async wait(host: string, delayMs: number, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const now = Date.now();
    const previous = this.last.get(host);
    const at = previous === undefined ? now : Math.max(now, previous + delayMs);
    this.last.set(host, at);
    if (at > now) await sleep(at - now, signal);
  }
}

/** setTimeout as a promise that rejects with the signal's reason when it aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
