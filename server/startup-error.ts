/**
 * Start-up failures as one line a person can act on: what went wrong and what to do, never a
 * stack trace (LOG_LEVEL=debug adds it below the line).
 */
import { isRefdeskError } from '../core/errors.ts';
import { redactSecrets } from '../core/services.ts';

export interface StartupContext {
  port?: number;
  host?: string;
}

/** The one-line explanation of an error that stopped a command or the server from starting. */
export function describeStartupError(e: unknown, ctx: StartupContext = {}): string {
  const oneLine = (s: string) => redactSecrets(s.replace(/\s*\n\s*/g, ' ').trim());
  if (isRefdeskError(e)) return oneLine(e.message);
  // The PostgreSQL store's own errors (plugins/store-postgres/pool.ts) already say what to fix and never hold the password.
  if ((e as Error)?.name === 'PostgresStoreError') return oneLine((e as Error).message);
  const err = e as NodeJS.ErrnoException & { syscall?: string; hostname?: string };
  if (err?.code?.startsWith?.('ERR_PARSE_ARGS')) return oneLine(err.message);
  const port = ctx.port ?? (err as { port?: number }).port;
  const host = ctx.host ?? (err as { address?: string }).address;
  const where = `${host && host.includes(':') ? `[${host}]` : host ?? ''}:${port ?? ''}`;
  if (err?.syscall === 'listen' || err?.syscall === 'bind') {
    switch (err.code) {
      case 'EADDRINUSE':
        return `Port ${port} is already in use on ${host} (another program, or another Refdesk server, listens there): stop it, or set PORT to a free port (PORT=0 picks one).`;
      case 'EACCES':
      case 'EPERM':
        return `Not allowed to listen on ${where}: ports below 1024 need privileges; set PORT to 1024 or above.`;
      case 'EADDRNOTAVAIL':
        return `HOST ${host} is not an address of this machine: set HOST to one of its addresses (127.0.0.1 for this machine only, 0.0.0.0 for every interface).`;
    }
  }
  if (err?.syscall === 'getaddrinfo' || err?.code === 'ENOTFOUND' || err?.code === 'EAI_AGAIN') {
    return `HOST ${host ?? err.hostname ?? ''} cannot be resolved to an address: set HOST to an IP address (127.0.0.1 for this machine only, 0.0.0.0 for every interface).`;
  }
  if (err?.path && err.code) {
    const what: Record<string, string> = {
      EACCES: 'permission denied',
      EPERM: 'permission denied',
      ENOENT: 'it does not exist',
      ENOTDIR: 'a part of its path is a file',
      EISDIR: 'it is a directory',
      EROFS: 'read-only file system',
      ENOSPC: 'no space left on the device',
    };
    return oneLine(`Cannot use ${err.path}: ${what[err.code] ?? err.code}. Check DATA_DIR and REFDESK_CONFIG and the permissions of what they name.`);
  }
  const message = e instanceof Error ? e.message : String(e);
  return oneLine(`Unexpected error: ${message} (LOG_LEVEL=debug prints its stack).`);
}

/** Prints the failure on stderr (`refdesk: <line>`, then the stack when LOG_LEVEL=debug) and exits 1. */
export function exitOnStartupFailure(e: unknown, ctx: StartupContext = {}): never {
  process.stderr.write(`refdesk: ${describeStartupError(e, ctx)}\n`);
  if (process.env.LOG_LEVEL === 'debug' && e instanceof Error && e.stack) process.stderr.write(redactSecrets(e.stack) + '\n');
  process.exit(1);
}
