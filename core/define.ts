import type { DepTokens, ResolvedDeps } from './di.ts';
import type { Chunker, Reranker, Source, Store } from './contracts.ts';
import type { EmbedderConnector, LlmConnector } from './providers.ts';

/** A JSON Schema (draft 2020-12 subset understood by ajv). Plugin option schemas are objects. */
export type JsonSchema = Record<string, unknown>;

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
 * refused); `deps` names the tokens `create` receives.
 */
export interface Definition<R extends Role = Role, O = any, D extends DepTokens = DepTokens> {
  role: R;
  /** Unique within its role across all enabled plugins, e.g. `upload`, `markdown`, `embedded`. */
  kind: string;
  description?: string;
  options: JsonSchema;
  deps: D;
  create(options: O, deps: ResolvedDeps<D>): RoleTypes[R] | Promise<RoleTypes[R]>;
}

/** A source definition also says which library IDs it makes and what a library's spec holds. */
export interface SourceDefinition<O = any, D extends DepTokens = DepTokens> extends Definition<'source', O, D> {
  /**
   * The library ID namespace this source creates, e.g. `docs` for `/docs/<name>`; or null when
   * IDs are `/owner/repo`.
   */
  idPrefix: string | null;
  /** JSON Schema of a library's source parameters (`spec`). Secret fields are `writeOnly`. */
  specSchema: JsonSchema;
  /**
   * The library ID a spec gives when the caller names none, e.g. `/vercel/next.js` for a GitHub
   * URL or `/websites/docs_example_com` for a site. Throws a RefdeskError for a spec it cannot name.
   */
  deriveId?(spec: Record<string, unknown>): string;
  /** A short name for lists and forms (GET /api/sources, the web UI's /add tabs); default: the description, else the kind. */
  title?: string;
  /**
   * How a library of this kind is added: `spec` (default) by its spec, on
   * `POST /api/v2/add/source/{kind}`, `refdesk add --source <kind> --spec`, the web UI's form;
   * `files` when the spec names files on the server (uploads): then only the upload routes add it.
   */
  addPayload?: 'spec' | 'files';
}

export type AnyDefinition = Definition<Role, any, any> | SourceDefinition<any, any>;

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

type DefInput<R extends Role, O, D extends DepTokens> = Omit<Definition<R, O, D>, 'role'>;

export function defineSource<O, D extends DepTokens>(d: Omit<SourceDefinition<O, D>, 'role'>): SourceDefinition<O, D> {
  return { role: 'source', ...d };
}
export function defineChunker<O, D extends DepTokens>(d: DefInput<'chunker', O, D>): Definition<'chunker', O, D> {
  return { role: 'chunker', ...d };
}
export function defineLlm<O, D extends DepTokens>(d: DefInput<'llm', O, D>): Definition<'llm', O, D> {
  return { role: 'llm', ...d };
}
export function defineEmbedder<O, D extends DepTokens>(d: DefInput<'embedder', O, D>): Definition<'embedder', O, D> {
  return { role: 'embedder', ...d };
}
export function defineReranker<O, D extends DepTokens>(d: DefInput<'reranker', O, D>): Definition<'reranker', O, D> {
  return { role: 'reranker', ...d };
}
export function defineStore<O, D extends DepTokens>(d: DefInput<'store', O, D>): Definition<'store', O, D> {
  return { role: 'store', ...d };
}
