import { RefdeskError } from '../../core/errors.ts';

const NAME_MAX = 100;

/**
 * `/openapi/<host with . as _>[_<path slug>]` for a URL spec, e.g.
 * `https://petstore3.swagger.io/api/v3/openapi.json` -> `/openapi/petstore3_swagger_io_api_v3_openapi.json`.
 * An uploaded file has no natural name: the caller must give one.
 */
export function deriveOpenApiId(spec: Record<string, unknown>): string {
  if (typeof spec.url !== 'string') {
    throw new RefdeskError('invalid_request', 'An uploaded OpenAPI spec needs a library name (it becomes /openapi/<name>).');
  }
  let url: URL;
  try {
    url = new URL(spec.url);
  } catch {
    throw new RefdeskError('invalid_request', 'The OpenAPI spec "url" is not a valid absolute URL.');
  }
  const clean = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[._-]+|[-]+$/g, '');
  // A non-default port is part of the name, so two APIs on one host do not share an ID.
  const host = clean(url.hostname.toLowerCase().replace(/\./g, '_')) + (url.port ? `_${url.port}` : '');
  const segments = url.pathname
    .split('/')
    .map((s) => {
      try {
        return clean(decodeURIComponent(s));
      } catch {
        return clean(s);
      }
    })
    .filter(Boolean);
  let name = [host, ...segments].join('_').slice(0, NAME_MAX).replace(/[^A-Za-z0-9]+$/, '');
  if (!/^[A-Za-z0-9]/.test(name)) name = `api-${name}`.slice(0, NAME_MAX);
  if (!name) throw new RefdeskError('invalid_request', 'Cannot derive a library name from this URL: give one.');
  return `/openapi/${name}`;
}
