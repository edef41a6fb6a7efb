/**
 * The support bundle (GET /api/support-bundle): one zip an operator can send to whoever helps
 * them, holding what a diagnosis needs and no secret.
 *
 *   README.txt      what the bundle holds
 *   version.json    Refdesk and kernel versions, the runtime (dist or tsx), Node, OS, uptime
 *   config.json     the resolved configuration and the Refdesk-related environment
 *   settings.json   the settings kept in the store
 *   licence.json    licensee, plan, expiry and state (never the key)
 *   store.json      libraries, versions, snippets, jobs by state, sizes on disk
 *   jobs.json       the recent jobs with their logs
 *   server.log      the server's recent log lines
 *   <name>.json     sections other modules add (`bundleSections`, e.g. the audit log)
 *
 * Secrets are removed in three layers, all applied to every section:
 *  1. by field name: values under names like token, secret, password, apiKey, key, session,
 *     cookie, credential become `[redacted]`;
 *  2. sealed values (core/secrets.ts isSealed) become `[redacted]`, and are opened so that their
 *     plain text is removed wherever else it shows up (a job log, a log line);
 *  3. by value and shape: every known secret value (secret-named environment variables, the
 *     files DATA_DIR keeps secrets in, opened sealed values, values found under secret names)
 *     with its encodings, then the generic shapes of core/redact.ts and `rdk_` API keys.
 */
import { readFile, readdir, stat, statfs } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { arch, cpus, freemem, loadavg, platform, release, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import yazl from 'yazl';
import type { JobRecord, LibraryRecord } from '../core/contracts.ts';
import type { Kernel } from '../core/kernel.ts';
import { KERNEL_VERSION } from '../core/version.ts';
import { REDACTED, createRedactor, type Redactor } from '../core/redact.ts';
import { isSealed, SECRET_KEY_FILE } from '../core/secrets.ts';
import { LOCK_FILE_NAME } from '../core/data-lock.ts';
import { uploadsDir } from '../core/uploads.ts';
import type { LogRing } from '../core/services.ts';
import type { LicenceView } from './access.ts';

/** A part of the bundle another module supplies (the audit log, ...): written as `<name>.json`, or `<name>` when it returns a string. */
export interface BundleSection {
  /** File name inside the zip: letters, digits, `.`, `-`, `_`. */
  name: string;
  build(): Promise<unknown>;
}

/** What the licence module can tell the bundle (never the key). */
export interface LicenceSummary {
  licensee?: string;
  plan?: string;
  trial?: boolean;
  issuedAt?: string;
  expiresAt?: string;
  state?: string;
}

export interface SupportBundleOptions {
  /** The process environment (main.ts passes process.env); secret-named values are removed everywhere. */
  env?: NodeJS.ProcessEnv;
  /** The server's recent log lines. */
  logRing?: LogRing;
  licence?: LicenceView;
  /** Licensee, plan and expiry, when the licence module offers them. */
  licenceSummary?: () => LicenceSummary | undefined;
  /** Settings keys read from the store besides the built-in ones. */
  settingKeys?: readonly string[];
  /** More sections (e.g. the audit log: `{name: 'audit', build: () => store.listAudit(...)}`). */
  bundleSections?: readonly BundleSection[];
  /** How many recent jobs (with their logs) the bundle holds. Default 50. */
  jobLimit?: number;
  /** Time the process started (uptime). */
  startedAt?: Date;
}

/** Settings the store holds today (server, access, settings engineers' keys). */
export const BUNDLE_SETTING_KEYS = ['policy', 'mcp.requireKey', 'mcp', 'anonymous', 'llm', 'embedding', 'git', 'server', 'admin', 'auth'];

/** Field names whose values are secrets whatever they hold. */
const SECRET_FIELD = /token|secret|passw|pwd|key$|keys$|private[-_]?key|credential|session|cookie|authorization|^pat$|signature|encryption[-_]?key|licen[cs]e[-_]?key|^seal/i;
/** Environment variables whose values are secrets, by name. */
const SECRET_ENV = /TOKEN|SECRET|PASSWORD|PASSWD|_PAT$|API_KEY|LICEN[CS]E_KEY|PRIVATE|ENCRYPTION|_KEY$|CREDENTIAL|SESSION|COOKIE/i;
/** Environment variables the bundle shows (values of secret-named ones redacted). */
const SHOWN_ENV = /^(REFDESK_|LICEN[CS]E_|PORT$|HOST$|DATA_DIR$|LOG_|ALLOWED_HOSTS$|TRUSTED_PROXIES$|NODE_ENV$|NODE_OPTIONS$|ENCRYPTION_KEY$|TZ$)/;
/** Files of DATA_DIR whose content is a secret (the sealing key, the setup token, ...). */
const SECRET_FILE = /secret|token|\.key$|passw|session|licen[cs]e/i;
const API_KEY_SHAPE = /\brdk_[A-Za-z0-9_-]{6,}/g;

interface Redaction {
  /** Removes secrets from a structure: names, sealed values, then the text redactor on each string. */
  value(v: unknown): unknown;
  text(s: string): string;
}

/** Collects every secret value reachable (field names, sealed values opened) into `out`. */
/**
 * `underSecret`: 1 when `v` is the value of a secret-named field (kept from 4 characters), 2 when
 * it is nested deeper under one (kept from 12 characters: ids and tokens, not a user name).
 */
function collectSecrets(v: unknown, open: (s: string) => string | null, out: Set<string>, underSecret: 0 | 1 | 2 = 0, depth = 0): void {
  if (depth > 20 || v === null || v === undefined) return;
  if (typeof v === 'string') {
    if (isSealed(v)) {
      out.add(v);
      const plain = open(v);
      if (plain) out.add(plain);
    } else if (underSecret && (v as string).length >= (underSecret === 1 ? 4 : 12)) out.add(v as string);
    return;
  }
  if (Array.isArray(v)) {
    for (const x of v) collectSecrets(x, open, out, underSecret ? 2 : 0, depth + 1);
    return;
  }
  if (typeof v === 'object') for (const [k, x] of Object.entries(v as Record<string, unknown>)) collectSecrets(x, open, out, underSecret ? 2 : SECRET_FIELD.test(k) ? 1 : 0, depth + 1);
}

function makeRedaction(secrets: Iterable<string>): Redaction {
  const redactor: Redactor = createRedactor(secrets);
  const text = (s: string) => redactor(s).replace(API_KEY_SHAPE, REDACTED);
  const value = (v: unknown, depth = 0): unknown => {
    if (typeof v === 'string') return isSealed(v) ? REDACTED : text(v);
    if (v === null || typeof v !== 'object' || depth > 20) return v;
    if (Array.isArray(v)) return v.map((x) => value(x, depth + 1));
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>).map(([k, x]) => {
        const secretName = SECRET_FIELD.test(k);
        // Booleans and numbers under a secret-looking name are flags (mcp.requireKey), not secrets.
        if (secretName && x !== null && x !== undefined && x !== '' && typeof x !== 'boolean' && typeof x !== 'number') return [text(k), REDACTED];
        return [text(k), value(x, depth + 1)];
      }),
    );
  };
  return { value: (v) => value(v), text };
}

/** Root files of DATA_DIR that hold secrets (sealing key, setup token ...): their contents. */
async function dataDirSecrets(dataDir: string): Promise<string[]> {
  const out: string[] = [];
  let names: string[] = [];
  try {
    names = await readdir(dataDir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (name !== SECRET_KEY_FILE && !SECRET_FILE.test(name)) continue;
    try {
      const s = await stat(join(dataDir, name));
      if (!s.isFile() || s.size > 65536) continue;
      const content = (await readFile(join(dataDir, name), 'utf8')).trim();
      if (content.length >= 4) {
        out.push(content);
        for (const line of content.split(/\r?\n/)) if (line.trim().length >= 8) out.push(line.trim());
      }
    } catch {
      /* unreadable: nothing to hide from it either */
    }
  }
  return out;
}

async function dirSize(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return { files, bytes };
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      const sub = await dirSize(p);
      files += sub.files;
      bytes += sub.bytes;
    } else if (e.isFile()) {
      files++;
      bytes += (await stat(p).catch(() => ({ size: 0 }))).size;
    }
  }
  return { files, bytes };
}

function packageVersion(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  for (const p of [join(here, '..', 'package.json'), join(here, '..', '..', 'package.json')]) {
    if (!existsSync(p)) continue;
    try {
      const pkg = JSON.parse(readFileSync(p, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'refdesk') return pkg.version ?? 'unknown';
    } catch {
      /* next */
    }
  }
  return 'unknown';
}

function buildInfo(): Record<string, unknown> {
  const compiled = import.meta.url.endsWith('.js');
  const out: Record<string, unknown> = { runtime: compiled ? 'dist' : 'tsx' };
  if (compiled) {
    const stamp = fileURLToPath(new URL('../.build-stamp', import.meta.url));
    if (existsSync(stamp)) out.builtAt = readFileSync(stamp, 'utf8').trim();
  }
  return out;
}

function libraryJson(l: LibraryRecord) {
  return {
    id: l.id,
    state: l.state,
    source: { kind: l.source.kind, spec: l.source.spec },
    versions: l.versions,
    totalSnippets: l.totalSnippets,
    totalTokens: l.totalTokens,
    lastUpdateDate: l.lastUpdateDate,
    createdAt: l.createdAt,
  };
}

/** Builds the bundle's sections as plain values (before redaction); a failing section records its error. */
async function gatherSections(kernel: Kernel, o: SupportBundleOptions): Promise<Array<[string, unknown]>> {
  const { store } = kernel;
  const env = o.env ?? {};
  const dataDir = kernel.env.dataDir;
  const safely = async (f: () => Promise<unknown>) => {
    try {
      return await f();
    } catch (e) {
      return { error: `this section could not be gathered: ${(e as Error).message}` };
    }
  };
  const sections: Array<[string, unknown]> = [];
  sections.push([
    'version.json',
    await safely(async () => ({
      refdesk: packageVersion(),
      kernel: KERNEL_VERSION,
      build: buildInfo(),
      node: process.version,
      versions: { v8: process.versions.v8, uv: process.versions.uv, openssl: process.versions.openssl },
      os: { platform: platform(), release: release(), arch: arch(), cpus: cpus().length, totalMemBytes: totalmem(), freeMemBytes: freemem(), loadavg: loadavg() },
      process: { pid: process.pid, uptimeSeconds: Math.round(process.uptime()), rssBytes: process.memoryUsage().rss, startedAt: o.startedAt?.toISOString() },
      generatedAt: new Date().toISOString(),
    })),
  ]);
  sections.push([
    'config.json',
    await safely(async () => ({
      configFile: kernel.configFile,
      dataDir,
      mode: kernel.env.mode,
      config: kernel.config,
      env: Object.fromEntries(
        Object.entries(env)
          .filter(([k, v]) => SHOWN_ENV.test(k) && v !== undefined)
          .map(([k, v]) => [k, SECRET_ENV.test(k) ? (v === '' ? '' : REDACTED) : v]),
      ),
      slots: { embedder: (await kernel.providers.embedder())?.model ?? null, reranker: kernel.reranker ? 'configured' : null, chunkers: kernel.chunkers.map((c) => c.formats) },
    })),
  ]);
  sections.push([
    'settings.json',
    await safely(async () => {
      const out: Record<string, unknown> = {};
      for (const key of [...BUNDLE_SETTING_KEYS, ...(o.settingKeys ?? [])]) {
        const v = await store.getSetting(key);
        if (v !== undefined) out[key] = v;
      }
      return out;
    }),
  ]);
  sections.push([
    'licence.json',
    await safely(async () => {
      const summary = o.licenceSummary?.();
      if (!o.licence && !summary) return { state: 'not configured' };
      return { ...summary, expiresAt: summary?.expiresAt ?? o.licence?.expiresAt(), expired: o.licence?.expired() ?? null };
    }),
  ]);
  sections.push([
    'store.json',
    await safely(async () => {
      const libraries = await store.listLibraries();
      const jobs = await store.listJobs({ limit: 100000 });
      const byState: Record<string, number> = {};
      for (const j of jobs) byState[j.state] = (byState[j.state] ?? 0) + 1;
      const files = await readdir(dataDir).catch(() => [] as string[]);
      const rootFiles: Record<string, number> = {};
      for (const f of files) {
        const s = await stat(join(dataDir, f)).catch(() => null);
        if (s?.isFile()) rootFiles[f] = s.size;
      }
      let freeBytes: number | null = null;
      try {
        const fs = await statfs(dataDir);
        freeBytes = Number(fs.bavail) * Number(fs.bsize);
      } catch {
        /* unknown */
      }
      return {
        totals: {
          libraries: libraries.length,
          versions: libraries.reduce((n, l) => n + l.versions.length + (l.lastUpdateDate ? 1 : 0), 0),
          snippets: libraries.reduce((n, l) => n + l.totalSnippets, 0),
          tokens: libraries.reduce((n, l) => n + l.totalTokens, 0),
          jobs: jobs.length,
          jobsByState: byState,
        },
        disk: {
          dataDirFiles: rootFiles,
          segments: await dirSize(join(dataDir, 'segments')),
          uploads: await dirSize(uploadsDir(dataDir)),
          freeBytes,
          lockHeld: LOCK_FILE_NAME in rootFiles,
        },
        libraries: libraries.map(libraryJson),
      };
    }),
  ]);
  sections.push([
    'jobs.json',
    await safely(async () => {
      const jobs: JobRecord[] = await store.listJobs({ limit: o.jobLimit ?? 50 });
      return Promise.all(jobs.map(async (job) => ({ job, log: (await store.getJobLog(job.id)).slice(-500) })));
    }),
  ]);
  sections.push(['server.log', o.logRing ? o.logRing.lines().join('\n') + '\n' : '(this process keeps no log ring: the server logs to stderr only)\n']);
  for (const s of o.bundleSections ?? []) {
    const name = /^[A-Za-z0-9._-]{1,60}$/.test(s.name) && !['README.txt', 'version.json', 'config.json', 'settings.json', 'licence.json', 'store.json', 'jobs.json', 'server.log'].includes(s.name) ? s.name : `section-${sections.length}`;
    const v = await safely(() => s.build());
    sections.push([typeof v === 'string' ? name : name.endsWith('.json') ? name : `${name}.json`, v]);
  }
  return sections;
}

const README = `Refdesk support bundle

Made by GET /api/support-bundle. Every secret is replaced by ${REDACTED}: API keys, tokens,
passwords, session ids, the licence key, the sealing key and the values sealed in the store.

version.json   Refdesk, kernel, runtime, Node and OS
config.json    the resolved configuration and the Refdesk-related environment
settings.json  the settings kept in the store
licence.json   licensee, plan, expiry and state (never the key)
store.json     libraries, versions, snippets, jobs by state, sizes on disk
jobs.json      the recent jobs with their logs
server.log     the server's recent log lines
`;

/** The zip's entries as text, every secret removed. */
export async function supportBundleEntries(kernel: Kernel, o: SupportBundleOptions = {}): Promise<Array<[string, string]>> {
  const raw = await gatherSections(kernel, o);
  // Every secret value known to this process, to remove wherever it shows up.
  const secrets = new Set<string>();
  const open = (s: string) => {
    try {
      return kernel.secrets.open(s);
    } catch {
      return null;
    }
  };
  for (const [k, v] of Object.entries(o.env ?? {})) if (v && v.length >= 4 && SECRET_ENV.test(k)) secrets.add(v);
  for (const s of await dataDirSecrets(kernel.env.dataDir)) secrets.add(s);
  for (const [, v] of raw) collectSecrets(v, open, secrets);
  const redaction = makeRedaction(secrets);
  const entries: Array<[string, string]> = [['README.txt', README]];
  for (const [name, v] of raw) {
    entries.push([name, typeof v === 'string' ? redaction.text(v) : JSON.stringify(redaction.value(v), null, 2) + '\n']);
  }
  return entries;
}

/** The support bundle as zip bytes. */
export async function buildSupportBundle(kernel: Kernel, o: SupportBundleOptions = {}): Promise<Buffer> {
  const entries = await supportBundleEntries(kernel, o);
  const zip = new yazl.ZipFile();
  const mtime = new Date();
  for (const [name, text] of entries) zip.addBuffer(Buffer.from(text, 'utf8'), `refdesk-support/${name}`, { mtime });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}
