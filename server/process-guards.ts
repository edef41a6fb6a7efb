/**
 * The server's last resort for errors no request handler caught: logged (redacted, one line
 * with the stack as a field) instead of ending the process. An unhandled promise rejection
 * leaves the server serving; an uncaught exception may have left state half-changed, so it
 * triggers an orderly shutdown (the store is saved and the lock released) and exit code 1.
 */
import type { EventEmitter } from 'node:events';
import type { Logger } from '../core/contracts.ts';
import { redactSecrets } from '../core/services.ts';

function describe(reason: unknown): { error: string; stack?: string } {
  if (reason instanceof Error) return { error: redactSecrets(`${reason.name}: ${reason.message}`), ...(reason.stack ? { stack: redactSecrets(reason.stack) } : {}) };
  let text: string;
  try {
    text = typeof reason === 'string' ? reason : JSON.stringify(reason) ?? String(reason);
  } catch {
    text = String(reason);
  }
  return { error: redactSecrets(text.slice(0, 2000)) };
}

export interface ProcessGuards {
  remove(): void;
}

export function installProcessGuards(proc: EventEmitter, logger: Logger, onUncaughtException: (e: unknown) => void): ProcessGuards {
  const onRejection = (reason: unknown) => {
    logger.error('unhandled promise rejection (a bug: please report it); the server keeps serving', describe(reason));
  };
  const onException = (e: unknown) => {
    logger.error('uncaught exception (a bug: please report it); the server shuts down', describe(e));
    onUncaughtException(e);
  };
  proc.on('unhandledRejection', onRejection);
  proc.on('uncaughtException', onException);
  return {
    remove() {
      proc.off('unhandledRejection', onRejection);
      proc.off('uncaughtException', onException);
    },
  };
}

/**
 * Keeps the server serving when whoever reads its stdout or stderr goes away (a closed pipe or
 * socket: EPIPE). Without a listener, the stream's 'error' is an uncaught exception, whose log
 * line fails the same way: the process spun logging "uncaught exception" once a millisecond and
 * never finished shutting down. Log lines written after that are dropped (there is no reader).
 */
export function ignoreBrokenStdio(streams: NodeJS.EventEmitter[] = [process.stdout, process.stderr]): void {
  for (const s of streams) s.on('error', () => {});
}
