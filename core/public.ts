/**
 * `refdesk/core`: what a plugin package builds on. Everything here is a stable part of the
 * kernel's contract with plugins (kernel version ranges, `KERNEL_VERSION`, say which kernels a
 * plugin works with); anything else under core/ is internal and may change without notice.
 *
 * - Definitions: `definePlugin`, `defineSource`, `defineChunker`, `defineEmbedder`,
 *   `defineReranker`, `defineLlm`, `defineStore`; options and specs declared with TypeBox's
 *   `Type` (re-exported here, with `StringEnum` and `OptionalStrings`) type `create(options)`
 *   and a source's `ctx.spec`.
 * - DI: `Tokens` (the services and slots a definition may depend on), `token()` for new ones.
 * - Contracts: the types of core/contracts.ts (Source, Chunker, Embedder, Reranker, Store, Fetch,
 *   Logger, Clock...) and of the model providers (Llm, EmbedderConnector, LlmConnector).
 * - Errors: `RefdeskError` (a code and an HTTP status a user can act on), `ConfigError`,
 *   `ProviderError`.
 * - Helpers for upstream text and secrets: `displayUrl`, `statusLine`, `mediaTypeLabel`,
 *   `fetchWithRetry`, `excerpt`, `createRedactor`; for chunkers: `citeOriginalLines`, `originalLine`.
 */
export { definePlugin, defineSource, defineChunker, defineEmbedder, defineReranker, defineLlm, defineStore } from './define.ts';
export type { AddRouteBody, AddRouteDeclaration, AddRouteResult, AnyDefinition, CliTargetDeclaration, CliTargetField, CliTargetInput, RefreshField, ParseAddressDeclaration, SpecUploadDeclaration, Definition, JsonSchema, OptionsOf, Plugin, PolicyCategory, Role, RoleTypes, SourceDefinition, SpecOf, TypedSource, TypedSourceContext } from './define.ts';
export { POLICY_CATEGORIES, DEFAULT_POLICY_CATEGORY } from './define.ts';
export { urlAddRoute } from './add-route.ts';
export { Type, type Static, type TSchema } from '@sinclair/typebox';
export { StringEnum, OptionalStrings } from './schema-types.ts';

export { Tokens } from './di-tokens.ts';
export { token, type Token, type DepTokens, type ResolvedDeps } from './di.ts';

export type * from './contracts.ts';
export { ProviderError, type Llm, type LlmAnswer, type LlmRequest, type LlmConnector, type EmbedderConnector, type ProviderConnector, type ProviderErrorKind, type Providers } from './providers.ts';
export type { ProviderEndpoint } from './provider-settings.ts';
export type { NetworkPolicy } from './net/address-policy.ts';
export type { GitCredentials } from './git-credentials.ts';

export { RefdeskError, ConfigError, isRefdeskError, type ErrorCode } from './errors.ts';
export { KERNEL_VERSION } from './version.ts';

export { displayUrl, statusLine, mediaTypeLabel, fetchWithRetry, type RetryOptions, type RetryPolicy, type RetriedResponse } from './net/retry.ts';
export { excerpt, createRedactor, type Redactor } from './redact.ts';
export { citeOriginalLines, originalLine } from './includes/line-map.ts';
