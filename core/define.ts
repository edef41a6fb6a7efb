import type { Static, TSchema } from '@sinclair/typebox';
import type { DepTokens, ResolvedDeps } from './di.ts';
import type { Chunker, Reranker, Source, SourceContext, SourceDocument, Store } from './contracts.ts';
import type { EmbedderConnector, LlmConnector } from './providers.ts';

/** A JSON Schema (draft 2020-12 subset understood by ajv). Plugin option schemas are objects. */
export type JsonSchema = Record<string, unknown>;

/**
 * The TypeScript type a schema declares. A TypeBox schema (`Type.Object({...})`, itself plain
 * JSON Schema) gives its static type; a schema written as a plain object literal gives `any`
 * (nothing to derive a type from). A property with a `default` and no `Type.Optional` is
 * non-optional in the type: ajv fills defaults in before it checks `required`, so the operator
 * may leave it out and `create` always receives it.
 */
export type OptionsOf<S> = S extends TSchema ? Static<S> : any;

/** The type of a source's `spec`, from its `specSchema` (a plain schema: `Record<string, unknown>`). */
export type SpecOf<S> = S extends TSchema ? Static<S> : Record<string, unknown>;

export type Role = 'source' | 'chunker' | 'llm' | 'embedder' | 'reranker' | 'store';

export interface RoleTypes {
  source: Source;
  chunker: Chunker;
  /** A model-provider plugin: a connector per wire API, given the endpoint from Settings (core/providers.ts). */
  llm: LlmConnector;
  embedder: EmbedderConnector;
  reranker: Reranker;
  store: Store;
}

/**
 * One definition: the same shape for every contract. `options` is the JSON Schema of the
 * options the operator gives in config (validated with ajv, defaults applied, unknown keys
 * refused); `deps` names the tokens `create` receives. Declare `options` with TypeBox
 * (`Type.Object(...)`, exported by `refdesk/core`) and `create`'s options are typed from it.
 */
export interface Definition<R extends Role = Role, S extends JsonSchema = JsonSchema, D extends DepTokens = DepTokens> {
  role: R;
  /** Unique within its role across all enabled plugins, e.g. `upload`, `markdown`, `embedded`. */
  kind: string;
  description?: string;
  options: S;
  deps: D;
  /** Makes the instance from the validated options (defaults filled in) and the resolved deps. */
  create: (options: OptionsOf<S>, deps: ResolvedDeps<D>) => RoleTypes[R] | Promise<RoleTypes[R]>;
}

/** What `read` receives when the spec type is known: the SourceContext with a typed `spec`. */
export interface TypedSourceContext<Spec> extends Omit<SourceContext, 'spec'> {
  /** The library's source parameters, validated against the source's specSchema (defaults applied). */
  spec: Spec;
}

/** A Source whose `spec` is typed from the definition's specSchema (see the Source contract). */
export interface TypedSource<Spec> {
  read(ctx: TypedSourceContext<Spec>): AsyncIterable<SourceDocument>;
  prepare?(spec: Spec, signal?: AbortSignal): Promise<Record<string, unknown>>;
}

/** A source definition also says which library IDs it makes and what a library's spec holds. */
export interface SourceDefinition<S extends JsonSchema = JsonSchema, D extends DepTokens = DepTokens, P extends JsonSchema = JsonSchema>
  extends Omit<Definition<'source', S, D>, 'create'> {
  /**
   * The library ID namespace this source creates, e.g. `docs` for `/docs/<name>`; or null when
   * IDs are `/owner/repo`.
   */
  idPrefix: string | null;
  /** JSON Schema of a library's source parameters (`spec`). Secret fields are `writeOnly`. */
  specSchema: P;
  /**
   * The library ID a spec gives when the caller names none, e.g. `/vercel/next.js` for a GitHub
   * URL or `/websites/docs_example_com` for a site. Throws a RefdeskError for a spec it cannot
   * name. The spec may not have been validated yet: check what it reads.
   */
  deriveId?(spec: Record<string, unknown>): string;
  /** Makes the source; any `Source` fits, and `read`'s `ctx.spec` is typed from `specSchema`. */
  create: (options: OptionsOf<S>, deps: ResolvedDeps<D>) => TypedSource<SpecOf<P>> | Promise<TypedSource<SpecOf<P>>>;
  /** A short name for lists and forms (GET /api/sources, the web UI's /add tabs); default: the description, else the kind. */
  title?: string;
  /**
   * How a library of this kind is added: `spec` (default) by its spec, on
   * `POST /api/v2/add/source/{kind}`, `refdesk add --source <kind> --spec`, the web UI's form;
   * `files` when the spec names files on the server (uploads): then only the upload routes add it.
   */
  addPayload?: 'spec' | 'files';
  /**
   * Add routes of its own beside `POST /api/v2/add/source/{kind}`: Context7-named aliases such
   * as `POST /api/v2/add/repo/github`, each taking its own body and mapping it to this source's
   * spec. They are mounted, and published in /api/openapi.json, for the sources the config loads.
   */
  addRoutes?: readonly AddRouteDeclaration[];
  /**
   * How well `refdesk add <url>` (no `--source`) fits this source: false (or 0) when it does not,
   * else a score; the loaded source with the highest score gets the URL (the first in config
   * order on a tie). Scores of the built-in sources: 40 a git host or `.git`, 30 a file name of
   * its own (llms.txt, openapi.json), 20 a host or path of its own (Confluence), 1 any http(s)
   * page (website, the generic fallback). Give a precise match more than 1.
   */
  matchUrl?(url: URL): number | boolean;
  /**
   * The access-policy category (`sourceTypes` of PATCH /api/v2/policies) of its libraries: one
   * of POLICY_CATEGORIES, or `{ categories, of(spec) }` when it depends on the library's spec
   * (git: public or private by its token). Without it: `private_sources`.
   */
  policyCategory?: PolicyCategory | { categories: readonly PolicyCategory[]; of(spec: Record<string, unknown>): PolicyCategory };
  /**
   * How `refdesk add <target>` names this source's libraries beyond `--source <kind> --spec`:
   * prefixes (`npm:zod`), non-URL targets it takes (local paths, `git@host:path`), URL schemes
   * besides http(s), flags and environment variables that fill spec fields, and the spec a target
   * gives. A URL target's kind is guessed by `matchUrl`. See CliTargetDeclaration.
   */
  cliTarget?: CliTargetDeclaration;
  /**
   * Fields POST /api/v1/refresh accepts for its libraries beside `libraryName`, each setting one
   * spec field for the new build (git: `branch`, and `gitToken` into the spec's `token`). A key
   * or an admin may send them; an anonymous refresh may not. Another source's library refuses them.
   */
  refreshFields?: readonly RefreshField[];
  /**
   * Adding a library by its address alone (POST /api/parse {url}, and the web UI's form for
   * signed-out visitors while the anonymous `parse` permission is On): the first loaded source
   * declaring it serves them. git declares it for repository addresses.
   */
  parseAddress?: ParseAddressDeclaration;
  /**
   * Adding a library by uploading its specification file (POST /api/v2/add/openapi-upload, and
   * the web UI's file form for admins): the first loaded source declaring it serves them; the
   * saved file's path goes in `specField`. openapi declares it for OpenAPI/Swagger documents.
   */
  specUpload?: SpecUploadDeclaration;
}

/** See SourceDefinition.parseAddress. */
export interface ParseAddressDeclaration {
  /** The address field's label and help in the web UI. */
  title: string;
  description: string;
  /**
   * Checks the address's form only (reaching it is the job's concern) and gives the library ID
   * and spec. Throw RefdeskError('invalid_request', ...) naming the field "url" for a bad address.
   * `allowHttpHosts`: hosts the operator lets be reached over http (the config's parse.allowHttpHosts).
   */
  parse(raw: string, opts: { allowHttpHosts: readonly string[] }): { url: string; id: string; spec: Record<string, unknown> };
}

/** See SourceDefinition.specUpload. */
export interface SpecUploadDeclaration {
  /** The spec field the saved file's server path goes in; the by-spec form leaves it out. */
  specField: string;
  /** Titles of the web UI's file form and of the source's by-spec form beside it. */
  fileTitle: string;
  fileDescription: string;
  specFormTitle?: string;
  /** Throws RefdeskError('invalid_request', ...) naming `fileName` unless the file at `path` is such a document. */
  check(path: string, fileName: string): Promise<void>;
}

/** One value `refdesk add` puts in a spec field: from a `--<flag>` (argv) or an environment variable (secrets: env only). */
export interface CliTargetField {
  /** The spec field it sets. */
  specField: string;
  /** `--<flag> <value>` (lower-case letters, digits and `-`); a secret has none (argv is readable by others). */
  flag?: string;
  /** An environment variable holding it (read when the flag is not given). */
  env?: string;
  /** One line for `refdesk --help`. */
  description?: string;
}

/** What `refdesk add <target>` hands a source's toSpec. */
export interface CliTargetInput {
  /** The kind chosen (the source's own, or another that spreads this declaration). */
  kind: string;
  /** The target as typed. */
  target: string;
  /** The target without a declared prefix (`npm:zod` gives `zod`); else the target. */
  rest: string;
  /** The target parsed as a URL, when it is one (`scheme://...`). */
  url: URL | null;
  /** The declared fields' values that were given (flag, else environment), by spec field. */
  values: Readonly<Record<string, string>>;
  /** `--name`, when given. */
  name?: string;
}

/** See SourceDefinition.cliTarget. */
export interface CliTargetDeclaration {
  /** `<prefix>:<rest>` targets that are this source's (`npm` for `npm:zod`). */
  prefixes?: readonly string[];
  /**
   * How well a target that is neither a URL nor prefixed fits (as matchUrl: false/0 not at all,
   * the highest score wins): 40 git's `user@host:path`, 1 upload's local path (the fallback).
   */
  matchTarget?(target: string): number | boolean;
  /** URL schemes besides http(s) it takes, e.g. `['ssh:', 'git+ssh:', 'file:']`. */
  urlSchemes?: readonly string[];
  /** Values from flags and environment variables (see CliTargetField). */
  fields?: readonly CliTargetField[];
  /**
   * The spec of a target (and a library name, for sources named by `--name`). Throw
   * RefdeskError('invalid_request'|'invalid_source', ...) naming what to give. Without it, a
   * URL target gives `{ url, ...values }`.
   */
  toSpec?(input: CliTargetInput): { spec: Record<string, unknown>; name?: string };
}

/** One field of POST /api/v1/refresh a source accepts (see SourceDefinition.refreshFields). */
export interface RefreshField {
  /** The body's field, e.g. `gitToken`. */
  field: string;
  /** The spec field it sets, e.g. `token`. */
  specField: string;
  /** Its longest value (default 500). */
  maxLength?: number;
}

/**
 * The access policy's source categories (Context7's six plus `openapi` and `packages`): the keys of
 * `sourceTypes` in GET/PATCH /api/v2/policies. A source declares which one its libraries are in.
 */
export const POLICY_CATEGORIES = ['public_repos', 'private_sources', 'confluence', 'uploaded_files', 'websites', 'llmstxt', 'openapi', 'packages'] as const;
export type PolicyCategory = (typeof POLICY_CATEGORIES)[number];
/** The category of a source that declares none. */
export const DEFAULT_POLICY_CATEGORY: PolicyCategory = 'private_sources';

/** The fields of an add route's body, read with the API's checks (messages name the field, never echo a value). */
export interface AddRouteBody {
  /** The body as sent (an object holding only the route's declared fields). */
  readonly raw: Readonly<Record<string, unknown>>;
  /** A required string of 1..max characters (trimmed): 400 naming the field when missing or wrong. */
  required(name: string, max?: number): string;
  /** The same, or undefined when the field is absent. */
  optional(name: string, max?: number): string | undefined;
  /** A required absolute http(s) URL of at most 2000 characters, without credentials. */
  httpUrl(name: string): string;
}

/** What an add route's body becomes: the spec (checked against specSchema next) and the library's title/description. */
export interface AddRouteResult {
  spec: Record<string, unknown>;
  title?: string;
  description?: string;
}

/** One alias add route a source declares (see SourceDefinition.addRoutes). */
export interface AddRouteDeclaration {
  /** The path under /api/v2/add/, e.g. `repo/github` or `website`: lower-case segments, not `source/...`. */
  path: string;
  /** One line for the OpenAPI document. */
  summary: string;
  /** The OpenAPI operationId, unique in the document, e.g. `addWebsite`. */
  operationId: string;
  /**
   * JSON Schema of the body (an object): its `properties` are the fields the route takes, in the
   * order the 400 for an unknown field lists them (`libraryTitle` is added when missing); any
   * other field is refused. Published as the route's request body.
   */
  body: JsonSchema;
  /** A name under the document's components.schemas when several routes share one body (e.g. `AddRepoRequest`). */
  schemaName?: string;
  /**
   * The spec a body gives. Throw RefdeskError('invalid_request', ...) naming the field for a bad
   * value. The body's `libraryTitle` names the library unless this returns a title.
   */
  toSpec(body: AddRouteBody): AddRouteResult;
}

export type AnyDefinition = Definition<Role, any, any> | SourceDefinition<any, any, any>;

export interface Plugin {
  readonly __refdeskPlugin: true;
  /** Package-style name, e.g. `@refdesk/source-upload`. */
  name: string;
  version: string;
  /** Semver range of kernel versions this plugin works with, e.g. `^1.0.0`. */
  kernel: string;
  definitions: AnyDefinition[];
}

export function definePlugin(p: Omit<Plugin, '__refdeskPlugin'>): Plugin {
  return { __refdeskPlugin: true, ...p };
}

type DefInput<R extends Role, S extends JsonSchema, D extends DepTokens> = Omit<Definition<R, S, D>, 'role'>;

export function defineSource<S extends JsonSchema, D extends DepTokens, P extends JsonSchema>(d: Omit<SourceDefinition<S, D, P>, 'role'>): SourceDefinition<S, D, P> {
  return { role: 'source', ...d };
}
export function defineChunker<S extends JsonSchema, D extends DepTokens>(d: DefInput<'chunker', S, D>): Definition<'chunker', S, D> {
  return { role: 'chunker', ...d };
}
export function defineLlm<S extends JsonSchema, D extends DepTokens>(d: DefInput<'llm', S, D>): Definition<'llm', S, D> {
  return { role: 'llm', ...d };
}
export function defineEmbedder<S extends JsonSchema, D extends DepTokens>(d: DefInput<'embedder', S, D>): Definition<'embedder', S, D> {
  return { role: 'embedder', ...d };
}
export function defineReranker<S extends JsonSchema, D extends DepTokens>(d: DefInput<'reranker', S, D>): Definition<'reranker', S, D> {
  return { role: 'reranker', ...d };
}
export function defineStore<S extends JsonSchema, D extends DepTokens>(d: DefInput<'store', S, D>): Definition<'store', S, D> {
  return { role: 'store', ...d };
}
