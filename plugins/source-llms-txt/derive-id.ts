import { RefdeskError } from '../../core/errors.ts';

/**
 * The library ID of an llms.txt URL: `/llmstxt/<host with '.' as '_'>-<last path segment>`, e.g.
 * `https://docs.deno.com/llms.txt` -> `/llmstxt/docs_deno_com-llms.txt`. A URL without a file
 * name gives just the host. Characters a library ID cannot hold become '-'.
 */
export function deriveLlmsTxtId(spec: Record<string, unknown>): string {
  let u: URL;
  try {
    u = new URL(String(spec.url));
  } catch {
    throw new RefdeskError('invalid_source', 'The llms.txt source needs "url": an absolute http(s) URL of an llms.txt file.');
  }
  // A non-default port is part of the name, so two sites on one host do not share an ID.
  const host = u.hostname.replace(/^\[|\]$/g, '').replace(/[.:]/g, '_') + (u.port ? `_${u.port}` : '');
  const last = u.pathname.split('/').filter(Boolean).pop() ?? '';
  const name = (last ? `${host}-${last}` : host).replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 100);
  if (!name) throw new RefdeskError('invalid_source', 'Cannot name a library after this URL; give a library name or ID.');
  return `/llmstxt/${name}`;
}
