/**
 * The server's access policy (Context7's "teamspace policy"; one per Refdesk server): which
 * source types are served, and which libraries (none filtered, a quality bar, or a selected
 * list). Library search hides what the policy hides; context for a hidden library is a 403.
 *
 * Quality signals Refdesk does not have (verification, licenses, website backlinks/traffic) are
 * kept as given and reported back, but do not filter: Refdesk never pretends to know them.
 */
import type { LibraryRecord, SettingsStore } from '../../core/contracts.ts';
import { DEFAULT_POLICY_CATEGORY, POLICY_CATEGORIES, type PolicyCategory, type SourceDefinition } from '../../core/define.ts';
import { RefdeskError } from '../../core/errors.ts';
import { parseLibraryId } from '../../core/library-id.ts';
import { validate } from '../../core/validate.ts';

/**
 * Context7's six source types, plus Refdesk's own `openapi` (specs by URL) and `packages` (npm,
 * PyPI): the policy's categories. Which category a library is in, its source plugin says
 * (SourceDefinition.policyCategory); a source that says nothing is `private_sources`.
 */
export const SOURCE_TYPES = POLICY_CATEGORIES;
export type SourceType = PolicyCategory;

export interface QualityFilters {
  requireVerified: boolean;
  minTrustScore: number | null;
  maxAgeDays: number | null;
  blockedLibraries: string[];
  exceptedLibraries: string[];
  repoFilters: { minStars: number | null; allowedLicenses: string[] };
  websiteFilters: { minBacklinks: number | null; minReferringDomains: number | null; minOrganicTraffic: number | null };
}

export interface Policy {
  sourceTypes: Record<SourceType, { enabled: boolean }>;
  libraryFilters: {
    mode: 'quality' | 'select' | null;
    quality: QualityFilters;
    select: { allowedLibraries: string[] };
  };
}

/** The setting key the policy is stored under. */
export const POLICY_SETTING = 'policy';
const MAX_LIST = 1000;
/** How many problems of a bad PATCH body the error message lists. */
const MAX_PROBLEMS_SHOWN = 5;

type CategoryOf = (lib: Pick<LibraryRecord, 'source'>) => SourceType;
/** Where a policy read by getPolicy keeps how its server's sources place libraries (never stored or sent). */
const CATEGORY_OF = Symbol('policy.categoryOf');
const categoriesByStore = new WeakMap<object, CategoryOf>();

/** The category a source's library is in, as its definition declares (the default when it declares none). */
export function categoryOfSpec(def: Pick<SourceDefinition, 'policyCategory'> | undefined, spec: Record<string, unknown>): SourceType {
  const declared = def?.policyCategory;
  if (!declared) return DEFAULT_POLICY_CATEGORY;
  return typeof declared === 'string' ? declared : declared.of(spec);
}

/** The categories these sources may place libraries in, in the policy's order (the settings page's checkboxes). */
export function sourceCategories(defs: Iterable<Pick<SourceDefinition, 'policyCategory'>>): SourceType[] {
  const used = new Set<SourceType>();
  for (const def of defs) {
    const declared = def.policyCategory ?? DEFAULT_POLICY_CATEGORY;
    for (const c of typeof declared === 'string' ? [declared] : declared.categories) used.add(c);
  }
  return SOURCE_TYPES.filter((t) => used.has(t));
}

/**
 * Policies read from this store (getPolicy) place each library in the category its source
 * declares; a library whose source kind is not loaded any more is in the default category.
 */
export function bindSourceCategories(store: SettingsStore, sources: ReadonlyMap<string, { def: SourceDefinition }>): void {
  categoriesByStore.set(store, (lib) => categoryOfSpec(sources.get(lib.source.kind)?.def, lib.source.spec ?? {}));
}

/** How the server a policy was read on places libraries, when it was read by getPolicy. */
const boundCategories = (policy: Policy): CategoryOf | undefined => (policy as Policy & { [CATEGORY_OF]?: CategoryOf })[CATEGORY_OF];

function withCategories<P extends Policy>(policy: P, categoryOf: CategoryOf | undefined): P {
  if (categoryOf) Object.defineProperty(policy, CATEGORY_OF, { value: categoryOf, enumerable: false });
  return policy;
}

/** The server's policy as stored (the defaults when it was never set). */
export async function getPolicy(store: SettingsStore): Promise<Policy> {
  return withCategories(normalizePolicy(await store.getSetting(POLICY_SETTING)), categoriesByStore.get(store));
}

export async function setPolicy(store: SettingsStore, policy: Policy): Promise<void> {
  await store.setSetting(POLICY_SETTING, policy);
}

export function defaultPolicy(): Policy {
  return {
    sourceTypes: Object.fromEntries(SOURCE_TYPES.map((t) => [t, { enabled: true }])) as Policy['sourceTypes'],
    libraryFilters: {
      mode: null,
      quality: {
        requireVerified: false,
        minTrustScore: null,
        maxAgeDays: null,
        blockedLibraries: [],
        exceptedLibraries: [],
        repoFilters: { minStars: null, allowedLicenses: [] },
        websiteFilters: { minBacklinks: null, minReferringDomains: null, minOrganicTraffic: null },
      },
      select: { allowedLibraries: [] },
    },
  };
}

/** A stored policy merged over the defaults (so policies stored by older versions stay valid). */
export function normalizePolicy(stored: unknown): Policy {
  const p = defaultPolicy();
  if (!stored || typeof stored !== 'object') return p;
  const s = stored as Partial<Policy>;
  for (const t of SOURCE_TYPES) {
    const v = s.sourceTypes?.[t]?.enabled;
    if (typeof v === 'boolean') p.sourceTypes[t] = { enabled: v };
  }
  const lf = s.libraryFilters;
  if (lf) {
    if (lf.mode === 'quality' || lf.mode === 'select' || lf.mode === null) p.libraryFilters.mode = lf.mode;
    p.libraryFilters.quality = {
      ...p.libraryFilters.quality,
      ...lf.quality,
      repoFilters: { ...p.libraryFilters.quality.repoFilters, ...lf.quality?.repoFilters },
      websiteFilters: { ...p.libraryFilters.quality.websiteFilters, ...lf.quality?.websiteFilters },
    };
    p.libraryFilters.select = { allowedLibraries: [...(lf.select?.allowedLibraries ?? [])] };
  }
  return p;
}

/** The source type a library belongs to under this policy's server (see bindSourceCategories). */
export function sourceTypeOf(policy: Policy, lib: Pick<LibraryRecord, 'source'>): SourceType {
  return boundCategories(policy)?.(lib) ?? DEFAULT_POLICY_CATEGORY;
}

/** True when the policy hides anything at all (search then reports `searchFilterApplied`). */
export function isRestrictive(policy: Policy): boolean {
  return policy.libraryFilters.mode !== null || SOURCE_TYPES.some((t) => !policy.sourceTypes[t].enabled);
}

export type PolicyDecision = { allowed: true } | { allowed: false; reason: string };

/** Whether the policy lets clients see the library, and if not, why (for the 403 message). */
export function decide(policy: Policy, lib: LibraryRecord, now: Date): PolicyDecision {
  const { mode, quality, select } = policy.libraryFilters;
  if (mode === 'quality' && quality.exceptedLibraries.includes(lib.id)) return { allowed: true };
  const type = sourceTypeOf(policy, lib);
  if (!policy.sourceTypes[type].enabled) return { allowed: false, reason: `its source type "${type}" is disabled by the server's policy` };
  if (mode === 'select' && !select.allowedLibraries.includes(lib.id)) {
    return { allowed: false, reason: "it is not included in the policy's allowed libraries" };
  }
  if (mode === 'quality') {
    if (quality.blockedLibraries.includes(lib.id)) return { allowed: false, reason: "it is on the policy's blocked list" };
    if (quality.minTrustScore !== null && lib.trustScore < quality.minTrustScore) {
      return { allowed: false, reason: `its trust score ${lib.trustScore} is below the policy's minimum of ${quality.minTrustScore}` };
    }
    if (quality.maxAgeDays !== null && lib.lastUpdateDate) {
      const ageDays = (now.getTime() - Date.parse(lib.lastUpdateDate)) / 86_400_000;
      if (ageDays > quality.maxAgeDays) return { allowed: false, reason: `it was last updated ${Math.floor(ageDays)} days ago, more than the policy's ${quality.maxAgeDays}` };
    }
    if (quality.repoFilters.minStars !== null && (type === 'public_repos' || type === 'private_sources') && lib.stars < quality.repoFilters.minStars) {
      return { allowed: false, reason: `it has ${lib.stars} stars, fewer than the policy's minimum of ${quality.repoFilters.minStars}` };
    }
  }
  return { allowed: true };
}

const nullableInt = (min: number, max?: number) => ({ type: ['integer', 'null'], minimum: min, ...(max !== undefined ? { maximum: max } : {}) });
const listOperation = {
  type: 'object',
  additionalProperties: false,
  properties: {
    add: { type: 'array', maxItems: MAX_LIST, items: { type: 'string', minLength: 1, maxLength: 500 } },
    remove: { type: 'array', maxItems: MAX_LIST, items: { type: 'string', minLength: 1, maxLength: 500 } },
    clear: { type: 'boolean' },
  },
};

/** JSON Schema of a PATCH /api/v2/policies body (also published in /api/openapi.json). */
export const POLICY_PATCH_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    sourceTypes: {
      type: 'object',
      additionalProperties: false,
      properties: {
        enable: { type: 'array', items: { type: 'string', enum: [...SOURCE_TYPES] } },
        disable: { type: 'array', items: { type: 'string', enum: [...SOURCE_TYPES] } },
      },
    },
    libraryFilters: {
      type: 'object',
      additionalProperties: false,
      properties: {
        mode: { enum: ['quality', 'select', null] },
        quality: {
          type: 'object',
          additionalProperties: false,
          properties: {
            requireVerified: { type: 'boolean' },
            minTrustScore: nullableInt(0, 10),
            maxAgeDays: nullableInt(1),
            blockedLibraries: listOperation,
            exceptedLibraries: listOperation,
            repoFilters: {
              type: 'object',
              additionalProperties: false,
              properties: { minStars: nullableInt(0), allowedLicenses: listOperation },
            },
            websiteFilters: {
              type: 'object',
              additionalProperties: false,
              properties: { minBacklinks: nullableInt(0), minReferringDomains: nullableInt(0), minOrganicTraffic: nullableInt(0) },
            },
          },
        },
        select: { type: 'object', additionalProperties: false, properties: { allowedLibraries: listOperation } },
      },
    },
  },
} as const;

interface ListOp {
  add?: string[];
  remove?: string[];
  clear?: boolean;
}

function applyList(current: string[], op: ListOp | undefined, where: string, libraryIds: boolean): string[] {
  if (!op) return current;
  const canon = (v: string) => {
    if (!libraryIds) return v;
    try {
      const parsed = parseLibraryId(v, { wholePath: true });
      if (parsed.version) throw new RefdeskError('invalid_request', `${where}: "${v}" pins a version; list library IDs without a version.`);
      return parsed.id;
    } catch (e) {
      if (e instanceof RefdeskError && e.code === 'invalid_library_id') throw new RefdeskError('invalid_request', `${where}: ${e.message}`);
      throw e;
    }
  };
  const add = (op.add ?? []).map(canon);
  const remove = new Set((op.remove ?? []).map(canon));
  const overlap = add.filter((x) => remove.has(x));
  if (overlap.length > 0) throw new RefdeskError('invalid_request', `${where}: "${overlap[0]}" is both added and removed.`);
  let out = op.clear ? [] : current.filter((x) => !remove.has(x));
  for (const x of add) if (!out.includes(x)) out = [...out, x];
  if (out.length > MAX_LIST) throw new RefdeskError('invalid_request', `${where}: at most ${MAX_LIST} entries.`);
  return out;
}

/** The policy after a PATCH body; a bad body is an `invalid_request` naming the field. */
export function applyPolicyPatch(current: Policy, patch: unknown): Policy {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch)) {
    throw new RefdeskError('invalid_request', 'The body must be a JSON object with "sourceTypes" and/or "libraryFilters".');
  }
  const problems = validate(POLICY_PATCH_SCHEMA as unknown as Record<string, unknown>, structuredClone(patch), 'body');
  if (problems.length > 0) {
    // A body with thousands of bad fields gets the first few named, not a megabyte of message.
    const shown = problems.slice(0, MAX_PROBLEMS_SHOWN).join('; ');
    const more = problems.length > MAX_PROBLEMS_SHOWN ? ` (and ${problems.length - MAX_PROBLEMS_SHOWN} more problems)` : '';
    throw new RefdeskError('invalid_request', `Invalid policy update: ${shown}${more}`);
  }
  const p = patch as {
    sourceTypes?: { enable?: SourceType[]; disable?: SourceType[] };
    libraryFilters?: {
      mode?: Policy['libraryFilters']['mode'];
      quality?: Partial<Omit<QualityFilters, 'blockedLibraries' | 'exceptedLibraries' | 'repoFilters' | 'websiteFilters'>> & {
        blockedLibraries?: ListOp;
        exceptedLibraries?: ListOp;
        repoFilters?: { minStars?: number | null; allowedLicenses?: ListOp };
        websiteFilters?: Partial<QualityFilters['websiteFilters']>;
      };
      select?: { allowedLibraries?: ListOp };
    };
  };
  const next = withCategories(structuredClone(current), boundCategories(current));
  const enable = p.sourceTypes?.enable ?? [];
  const disable = p.sourceTypes?.disable ?? [];
  const both = enable.filter((t) => disable.includes(t));
  if (both.length > 0) throw new RefdeskError('invalid_request', `sourceTypes: "${both[0]}" is in both enable and disable.`);
  for (const t of enable) next.sourceTypes[t] = { enabled: true };
  for (const t of disable) next.sourceTypes[t] = { enabled: false };
  const lf = p.libraryFilters;
  if (lf) {
    if (lf.mode !== undefined) next.libraryFilters.mode = lf.mode;
    const q = lf.quality;
    if (q) {
      const nq = next.libraryFilters.quality;
      if (q.requireVerified !== undefined) nq.requireVerified = q.requireVerified;
      if (q.minTrustScore !== undefined) nq.minTrustScore = q.minTrustScore;
      if (q.maxAgeDays !== undefined) nq.maxAgeDays = q.maxAgeDays;
      nq.blockedLibraries = applyList(nq.blockedLibraries, q.blockedLibraries, 'libraryFilters.quality.blockedLibraries', true);
      nq.exceptedLibraries = applyList(nq.exceptedLibraries, q.exceptedLibraries, 'libraryFilters.quality.exceptedLibraries', true);
      if (q.repoFilters?.minStars !== undefined) nq.repoFilters.minStars = q.repoFilters.minStars;
      nq.repoFilters.allowedLicenses = applyList(nq.repoFilters.allowedLicenses, q.repoFilters?.allowedLicenses, 'libraryFilters.quality.repoFilters.allowedLicenses', false);
      for (const k of ['minBacklinks', 'minReferringDomains', 'minOrganicTraffic'] as const) {
        if (q.websiteFilters?.[k] !== undefined) nq.websiteFilters[k] = q.websiteFilters[k]!;
      }
    }
    next.libraryFilters.select.allowedLibraries = applyList(
      next.libraryFilters.select.allowedLibraries,
      lf.select?.allowedLibraries,
      'libraryFilters.select.allowedLibraries',
      true,
    );
  }
  return next;
}
