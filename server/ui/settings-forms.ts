/**
 * The settings page's forms (urlencoded fields) turned into the bodies the API takes
 * (PATCH /api/settings, PATCH /api/v2/policies), and an API error turned into messages beside
 * the fields. No checks of their own: the bodies go through the API's validation, which names
 * the fields it refuses; the form fields are named like the API's paths (`llm.baseUrl`,
 * `git.hosts[0].host`, `libraryFilters.quality.minTrustScore`) so its messages land beside them.
 * Secret fields are write-only: empty keeps the stored value, "remove" sends null.
 */
import { ANONYMOUS_PERMISSIONS } from '../../core/settings.ts';
import { SOURCE_TYPES, type SourceType } from '../access/policy.ts';
import type { StoredGitHost } from '../../core/provider-settings.ts';

export type Form = Record<string, string>;

const text = (form: Form, name: string): string => (form[name] ?? '').trim();
const checked = (form: Form, name: string): boolean => form[name] === 'on' || form[name] === 'true';

/** '' -> null (the default applies), digits -> a number, anything else as typed (the API refuses it, naming the field). */
function numberOrNull(form: Form, name: string): number | string | null {
  const v = text(form, name);
  if (v === '') return null;
  return /^\d{1,15}$/.test(v) ? Number(v) : v;
}

/** A write-only secret: {remove} -> null, typed -> the value, empty -> not sent (kept). */
function secretField(form: Form, name: string, removeName: string, out: Record<string, unknown>, key: string): void {
  if (checked(form, removeName)) out[key] = null;
  else if ((form[name] ?? '') !== '') out[key] = form[name];
}

/** `llm` or `embedding` section of PATCH /api/settings from the providers form. */
function providerSection(form: Form, section: 'llm' | 'embedding'): Record<string, unknown> {
  const out: Record<string, unknown> = {
    provider: text(form, `${section}.provider`) || null,
    model: text(form, `${section}.model`) || null,
    baseUrl: text(form, `${section}.baseUrl`) || null,
  };
  secretField(form, `${section}.apiKey`, `${section}.removeKey`, out, 'apiKey');
  return out;
}

export function providersPatch(form: Form): Record<string, unknown> {
  return { llm: providerSection(form, 'llm'), embedding: providerSection(form, 'embedding') };
}

/** The rows of the git hosts table the form holds (`git.hosts[i].*`, i from 0 while present). */
export function hostRows(form: Form): Array<{ row: number; host: string; provider: string; token: string; removeToken: boolean; remove: boolean }> {
  const rows = [];
  for (let i = 0; i <= 50 && `git.hosts[${i}].host` in form; i++) {
    const p = `git.hosts[${i}]`;
    rows.push({ row: i, host: text(form, `${p}.host`), provider: text(form, `${p}.provider`), token: form[`${p}.token`] ?? '', removeToken: checked(form, `${p}.removeToken`), remove: checked(form, `${p}.remove`) });
  }
  return rows;
}

/**
 * `git` section from the git tokens form, and which form row each entry of `hosts` came from
 * (for placing errors). `hosts` is sent only when the list or a host's token changes.
 */
export function gitPatch(form: Form, stored: StoredGitHost[]): { patch: Record<string, unknown>; rowOf: number[] } {
  const git: Record<string, unknown> = {};
  secretField(form, 'git.githubToken', 'git.removeGithubToken', git, 'githubToken');
  secretField(form, 'git.gitlabToken', 'git.removeGitlabToken', git, 'gitlabToken');
  const rowOf: number[] = [];
  const hosts: Array<Record<string, unknown>> = [];
  let tokenOps = false;
  for (const r of hostRows(form)) {
    if (r.remove || r.host === '') continue;
    const entry: Record<string, unknown> = { host: r.host, provider: r.provider };
    if (r.removeToken) entry.token = null;
    else if (r.token !== '') entry.token = r.token;
    if ('token' in entry) tokenOps = true;
    rowOf.push(r.row);
    hosts.push(entry);
  }
  const same = hosts.length === stored.length && hosts.every((h, i) => h.host === stored[i].host && h.provider === stored[i].provider);
  if (!same || tokenOps) git.hosts = hosts;
  return { patch: { git }, rowOf };
}

/** `anonymous`, `mcp` and `uploads` sections from the access form (a checkbox not sent is Off). */
export function accessPatch(form: Form): Record<string, unknown> {
  return {
    anonymous: Object.fromEntries(ANONYMOUS_PERMISSIONS.map((p) => [p, checked(form, `anonymous.${p}`)])),
    mcp: { requireKey: checked(form, 'mcp.requireKey') },
    uploads: { maxBytes: numberOrNull(form, 'uploads.maxBytes'), maxFiles: numberOrNull(form, 'uploads.maxFiles') },
  };
}

const lines = (form: Form, name: string): string[] => (form[name] ?? '').split(/\r?\n/).map((l) => l.trim()).filter(Boolean);

/**
 * PATCH /api/v2/policies body from the policies form (lists replaced by what the text areas
 * hold). `categories`: the source types the form shows (the page's: those of the loaded
 * sources); the others keep their stored state.
 */
export function policyPatch(form: Form, categories: readonly SourceType[] = SOURCE_TYPES): Record<string, unknown> {
  const mode = text(form, 'libraryFilters.mode');
  return {
    sourceTypes: {
      enable: categories.filter((t) => checked(form, `sourceTypes.${t}`)),
      disable: categories.filter((t) => !checked(form, `sourceTypes.${t}`)),
    },
    libraryFilters: {
      mode: mode === '' || mode === 'none' ? null : mode,
      quality: {
        requireVerified: checked(form, 'libraryFilters.quality.requireVerified'),
        minTrustScore: numberOrNull(form, 'libraryFilters.quality.minTrustScore'),
        maxAgeDays: numberOrNull(form, 'libraryFilters.quality.maxAgeDays'),
        blockedLibraries: { clear: true, add: lines(form, 'libraryFilters.quality.blockedLibraries') },
      },
      select: { allowedLibraries: { clear: true, add: lines(form, 'libraryFilters.select.allowedLibraries') } },
    },
  };
}

/**
 * An API error message split into messages beside the named fields: each `; `-separated
 * problem goes to the longest field name it mentions (`llm.baseUrl: ...`, `"newPassword" ...`),
 * what names none stays in `general`. `rename` maps a path of the body to a form field
 * (e.g. the index of a git host to its form row).
 */
export function fieldErrors(message: string, fields: string[], rename: (path: string) => string = (p) => p): { errors: Record<string, string>; general: string[] } {
  const errors: Record<string, string> = {};
  const general: string[] = [];
  const body = message.replace(/^(Invalid [a-z ]+?): /, '').replace(/\.$/, '');
  const byLength = [...fields].sort((a, b) => b.length - a.length);
  for (const raw of body.split('; ')) {
    const piece = raw.replace(/^body\./, '');
    const pathMatch = /^([A-Za-z0-9_.[\]]+): (.*)$/.exec(piece);
    const path = pathMatch ? rename(pathMatch[1]) : '';
    const field = byLength.find((f) => f === path) ?? byLength.find((f) => piece.startsWith(`${f} `) || piece.includes(`"${f}"`) || piece.startsWith(`${f}:`));
    if (field) errors[field] = errors[field] ? `${errors[field]}; ${pathMatch ? pathMatch[2] : piece}` : pathMatch ? pathMatch[2] : piece;
    else general.push(piece);
  }
  return { errors, general };
}
