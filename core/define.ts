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
