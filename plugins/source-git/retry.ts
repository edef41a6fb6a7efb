/** Retries with exponential backoff for steps that may fail on a flaky network. */

export interface RetryOptions {
  /** Attempts in all (1 = no retry). */
  attempts: number;
  /** Delay before the second attempt; doubled each time after. */
  baseDelayMs: number;
  signal: AbortSignal;
  /** Called before each new attempt with the attempt number (2, 3, ...) and the delay. */
  onRetry(attempt: number, delayMs: number, error: Error): void;
}

/** A failure that another attempt may fix. */
export class RetryableError extends Error {
  constructor(readonly error: Error) {
    super(error.message);
    this.name = 'RetryableError';
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `step`; when it throws a RetryableError, waits and tries again, up to `attempts` times.
 * The last failure is thrown as the wrapped error, its message saying how many attempts were made.
 */
export async function withRetry<T>(step: () => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (e) {
      if (!(e instanceof RetryableError)) throw e;
      if (attempt >= options.attempts) {
        const err = e.error;
        if (options.attempts > 1) err.message = `${err.message.replace(/\.$/, '')} (gave up after ${options.attempts} attempts).`;
        throw err;
      }
      const delay = options.baseDelayMs * 2 ** (attempt - 1);
      options.onRetry(attempt + 1, delay, e.error);
      await sleep(delay, options.signal);
    }
  }
}
