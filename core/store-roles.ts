/**
 * The Store's roles at run time: which contract methods belong to which role (core/contracts.ts),
 * and `delegateStoreRoles`, which makes a store class out of one object per role. The embedded
 * and in-memory stores are composed this way, and a new store (PostgreSQL) can be too: one
 * class per role, each tested alone by its suite (core/testing/store-contracts/).
 */
import type { ApiKeyStore, AuditStore, BuildStore, CatalogStore, JobQueue, JobStore, SessionStore, SettingsStore, StoreRole } from './contracts.ts';

/** The interface of each role. */
export interface StoreRoleInterfaces {
  catalog: CatalogStore;
  builds: BuildStore;
  jobs: JobStore;
  apiKeys: ApiKeyStore;
  sessions: SessionStore;
  audit: AuditStore;
  settings: SettingsStore;
}

/** The optional shared-queue methods of the jobs role (JobQueue). */
const JOB_QUEUE_METHODS = ['claimNextJob', 'renewLease', 'releaseJob', 'requestCancel', 'watchJobs', 'sweepExpiredLeases', 'leaseTiming'] as const satisfies readonly (keyof JobQueue)[];

/** Every method of every role, by role. */
export const STORE_ROLE_METHODS = {
  catalog: ['upsertLibrary', 'getLibrary', 'listLibraries', 'deleteLibrary', 'renameLibrary', 'resolveLibraryAlias', 'getVersion', 'listVersions'],
  builds: ['beginBuild', 'addSnippets', 'addDocuments', 'getDocuments', 'servedBuildChunkers', 'finalizeBuild', 'failBuild', 'getSnippets', 'getSnippetHeads', 'search', 'segmentFile', 'localStoredDocs', 'unreadableBuilds', 'buildVectors'],
  jobs: ['createJob', 'createJobOnce', 'updateJob', 'claimJob', 'appendJobLog', 'getJob', 'getJobLog', 'listJobs', ...JOB_QUEUE_METHODS],
  apiKeys: ['createApiKey', 'findApiKeyByHash', 'listApiKeys', 'revokeApiKey'],
  sessions: ['getAdminAccount', 'setAdminAccount', 'createSession', 'getSession', 'updateSession', 'deleteSessions'],
  audit: ['appendAudit', 'listAudit'],
  settings: ['getSetting', 'setSetting'],
} as const satisfies { [R in StoreRole]: readonly (keyof StoreRoleInterfaces[R])[] };

/** Methods a role may leave out (optional in the contract). */
const OPTIONAL_METHODS: ReadonlySet<string> = new Set(['getSnippetHeads', 'servedBuildChunkers', 'segmentFile', 'localStoredDocs', 'unreadableBuilds', 'buildVectors', 'createJobOnce', ...JOB_QUEUE_METHODS]);

// Compile-time check that the lists above name every method of every role.
type Unlisted<R extends StoreRole> = Exclude<keyof StoreRoleInterfaces[R], (typeof STORE_ROLE_METHODS)[R][number]>;
const everyMethodListed: { [R in StoreRole]: [Unlisted<R>] extends [never] ? true : Unlisted<R> } = {
  catalog: true,
  builds: true,
  jobs: true,
  apiKeys: true,
  sessions: true,
  audit: true,
  settings: true,
};
void everyMethodListed;

type RoleClass<T> = abstract new (...args: never[]) => T;

/**
 * Gives `storeClass` every contract method of its roles: an instance holds one object per role
 * under the role's name (`this.catalog`, `this.builds`, ...: `StoreRole`), and `store.getJob(id)`
 * calls `store.jobs.getJob(id)`. A method a role's class does not define is left out when the
 * contract makes it optional (`segmentFile`), and refused otherwise. Declare the methods on the
 * class with an interface of the same name (`interface MyStore extends Store {}`).
 */
export function delegateStoreRoles(storeClass: RoleClass<object>, roleClasses: { [R in StoreRole]: RoleClass<StoreRoleInterfaces[R]> }): void {
  for (const role of Object.keys(STORE_ROLE_METHODS) as StoreRole[]) {
    const proto = roleClasses[role].prototype as Record<string, unknown>;
    for (const method of STORE_ROLE_METHODS[role] as readonly string[]) {
      if (typeof proto[method] !== 'function') {
        if (OPTIONAL_METHODS.has(method)) continue;
        throw new TypeError(`${storeClass.name}: the ${role} role (${roleClasses[role].name}) has no method ${method}`);
      }
      const delegate = {
        [method](this: Record<string, Record<string, (...args: unknown[]) => unknown>>, ...args: unknown[]): unknown {
          return this[role][method](...args);
        },
      }[method];
      Object.defineProperty(storeClass.prototype, method, { value: delegate, writable: true, configurable: true, enumerable: false });
    }
  }
}
