/**
 * `refdesk keys ...`, `refdesk rename ...` and `refdesk settings ...`: through the running server's admin
 * routes when a server holds the data directory (authenticated with the local CLI token the
 * server wrote to DATA_DIR/cli-token), else on the data directory directly.
 */
import type { ApiKeyRecord, ApiKeyRole, RuntimeEnv } from '../core/contracts.ts';
import type { Kernel } from '../core/kernel.ts';
import { RefdeskError } from '../core/errors.ts';
import { createApiKey } from './access/api-keys.ts';
import { readDataLock } from '../core/data-lock.ts';
import { adminAuthHeaders } from './auth/local-files.ts';
import { resetAdminAccount } from './auth/reset.ts';
import type { ProcessSettings } from './env.ts';
import { renameLibrary } from './api/service.ts';
import { MCP_REQUIRE_KEY, getMcpRequireKey, setMcpRequireKey } from '../core/settings.ts';

type OpenKernel = (settings: ProcessSettings, mode: RuntimeEnv['mode']) => Promise<Kernel>;


/** Calls an admin route of the server holding the data directory, or returns null when none runs. */
async function viaServer(settings: ProcessSettings, method: string, path: string, body?: unknown): Promise<Record<string, unknown> | null> {
  const lock = await readDataLock(settings.dataDir);
  if (!lock || lock.mode !== 'server' || !lock.port) return null;
  const auth = await adminAuthHeaders(settings.dataDir);
  const res = await fetch(`http://127.0.0.1:${lock.port}/api/admin${path}`, {
    method,
    headers: body === undefined ? auth : { ...auth, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new RefdeskError('invalid_request', String(json.message ?? res.statusText));
  return json;
}

async function withKernel<T>(open: OpenKernel, settings: ProcessSettings, mode: RuntimeEnv['mode'], fn: (k: Kernel) => Promise<T>): Promise<T> {
  const kernel = await open(settings, mode);
  try {
    return await fn(kernel);
  } finally {
    await kernel.close();
  }
}

type KeyUsage = { used: number; limit: number; resetAt: string };

/** One key a line; through a running server also its use of the current rate-limit window. */
function keyLine(k: ApiKeyRecord & { usage?: KeyUsage }): string {
  const usage = k.usage ? `\t${k.usage.used}/${k.usage.limit} requests until ${k.usage.resetAt}` : '';
  return `${k.id}\t${k.prefix}...\t${k.plan}\t${k.role}\t${k.name || '-'}\t${k.createdAt}\t${k.revokedAt ? 'revoked ' + k.revokedAt : 'active'}${usage}\n`;
}

export async function cmdKeys(open: OpenKernel, settings: ProcessSettings, positionals: string[], values: Record<string, unknown>): Promise<number> {
  const [sub, arg] = positionals;
  switch (sub) {
    case 'create': {
      const input = {
        ...(typeof values.name === 'string' ? { name: values.name } : {}),
        ...(typeof values.plan === 'string' ? { plan: values.plan } : {}),
        ...(typeof values.role === 'string' ? { role: values.role as ApiKeyRole } : {}),
      };
      const created =
        ((await viaServer(settings, 'POST', '/keys', input)) as { key: string; record: ApiKeyRecord } | null) ??
        (await withKernel(open, settings, 'writer', (k) =>
          createApiKey(k.store, input, { names: Object.keys(k.config.rateLimits.plans), defaultPlan: k.config.rateLimits.defaultPlan }),
        ));
      process.stderr.write(`Created ${created.record.id} (plan ${created.record.plan}, role ${created.record.role}). The key is shown once; store it now:\n`);
      process.stdout.write(created.key + '\n');
      return 0;
    }
    case 'list': {
      const keys =
        ((await viaServer(settings, 'GET', '/keys')) as { keys: Array<ApiKeyRecord & { usage?: KeyUsage }> } | null)?.keys ??
        (await withKernel(open, settings, 'reader', (k) => k.store.listApiKeys()));
      if (keys.length === 0) process.stdout.write('No API keys. Create one: refdesk keys create --name ci\n');
      for (const k of keys) process.stdout.write(keyLine(k));
      return 0;
    }
    case 'revoke': {
      if (!arg) throw new RefdeskError('invalid_request', 'keys revoke: give the key id (see refdesk keys list).');
      const record =
        ((await viaServer(settings, 'DELETE', `/keys/${encodeURIComponent(arg)}`)) as { record: ApiKeyRecord } | null)?.record ??
        (await withKernel(open, settings, 'writer', async (k) => {
          const r = await k.store.revokeApiKey(arg);
          if (!r) throw new RefdeskError('invalid_request', `Unknown key id "${arg.slice(0, 40)}"; list the keys with refdesk keys list.`);
          return r;
        }));
      process.stdout.write(`Revoked ${record.id} (${record.prefix}...).\n`);
      return 0;
    }
    default:
      throw new RefdeskError('invalid_request', 'keys: use "keys create [--name N] [--plan P] [--role member|admin]", "keys list" or "keys revoke <id>".');
  }
}

export async function cmdRename(open: OpenKernel, settings: ProcessSettings, positionals: string[]): Promise<number> {
  const [from, to] = positionals;
  if (!from || !to) throw new RefdeskError('invalid_request', 'rename: give the old and the new library ID, e.g. refdesk rename /docs/old /docs/new');
  const viaHttp = await viaServer(settings, 'POST', '/rename', { from, to });
  const id = viaHttp ? (viaHttp.library as { id: string }).id : (await withKernel(open, settings, 'writer', (k) => renameLibrary(k, from, to))).id;
  process.stdout.write(`Renamed ${from} to ${id}; ${from} now answers 301 with redirectUrl ${id}.\n`);
  return 0;
}

/**
 * `refdesk account reset`: the admin account back to the factory credentials and every session
 * ended, through the running server (its local CLI token) or on the data directory.
 */
export async function cmdAccount(open: OpenKernel, settings: ProcessSettings, positionals: string[]): Promise<number> {
  if (positionals[0] !== 'reset' || positionals.length !== 1) {
    throw new RefdeskError('invalid_request', 'account: use "account reset" (the admin account back to admin / refdesk, every session ended).');
  }
  const viaHttp = await viaServer(settings, 'POST', '/account/reset', {});
  const ended = viaHttp
    ? Number(viaHttp.sessionsEnded)
    : (await withKernel(open, settings, 'writer', (k) => resetAdminAccount(k.store, settings.dataDir))).sessionsEnded;
  process.stdout.write(
    `The admin account is back to the factory credentials (admin / refdesk); ${ended} session(s) ended. Sign in from this machine, or with the setup token in ${settings.dataDir}/setup-token, and change them.\n`,
  );
  return 0;
}

/** `refdesk settings` (show) and `refdesk settings set mcp.requireKey true|false`. */
export async function cmdSettings(open: OpenKernel, settings: ProcessSettings, positionals: string[]): Promise<number> {
  const [sub = 'get', name, raw] = positionals;
  let current: Record<string, unknown>;
  if (sub === 'get') {
    current =
      (await viaServer(settings, 'GET', '/settings')) ??
      (await withKernel(open, settings, 'reader', async (k) => ({ [MCP_REQUIRE_KEY]: await getMcpRequireKey(k.store) })));
  } else if (sub === 'set') {
    if (name !== MCP_REQUIRE_KEY || (raw !== 'true' && raw !== 'false')) {
      throw new RefdeskError('invalid_request', `settings set: the only setting is ${MCP_REQUIRE_KEY}, with true or false, e.g. refdesk settings set ${MCP_REQUIRE_KEY} true`);
    }
    const value = raw === 'true';
    current =
      (await viaServer(settings, 'PATCH', '/settings', { [MCP_REQUIRE_KEY]: value })) ??
      (await withKernel(open, settings, 'writer', async (k) => {
        await setMcpRequireKey(k.store, value);
        return { [MCP_REQUIRE_KEY]: await getMcpRequireKey(k.store) };
      }));
  } else {
    throw new RefdeskError('invalid_request', `settings: use "settings" to show them or "settings set ${MCP_REQUIRE_KEY} true|false".`);
  }
  for (const [k, v] of Object.entries(current)) process.stdout.write(`${k}\t${String(v)}\n`);
  return 0;
}
