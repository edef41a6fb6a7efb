import 'reflect-metadata';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';

/**
 * A typed DI token. At runtime it is a unique symbol; the phantom field carries the
 * type so `resolve(token)` is typed without decorator metadata.
 */
export type Token<T> = symbol & { readonly __type?: T };

export function token<T>(name: string): Token<T> {
  return Symbol.for(`refdesk:${name}`) as Token<T>;
}

/** A map of dependency names to tokens, as every definition declares them. */
export type DepTokens = Record<string, Token<unknown>>;
/** The resolved values of a DepTokens map. */
export type ResolvedDeps<D extends DepTokens> = { [K in keyof D]: D[K] extends Token<infer T> ? T : never };

/**
 * A fresh container isolated from tsyringe's global one: we only create children of it and
 * never register anything on the global container itself.
 */
export function newContainer(): DependencyContainer {
  return rootContainer.createChildContainer();
}

export function resolveDeps<D extends DepTokens>(c: DependencyContainer, deps: D, owner: string): ResolvedDeps<D> {
  const out: Record<string, unknown> = {};
  for (const [name, tok] of Object.entries(deps)) {
    if (!c.isRegistered(tok, true)) {
      throw new Error(`${owner}: dependency "${name}" (${tok.description ?? String(tok)}) is not provided by any enabled plugin`);
    }
    out[name] = c.resolve(tok);
  }
  return out as ResolvedDeps<D>;
}

export type { DependencyContainer };
