/**
 * An uploaded OpenAPI/Swagger file is checked when it arrives, so a wrong file is a 400 naming
 * the file the user sent instead of a failed job naming the server's copy: it must parse as JSON
 * or YAML and have an `openapi` or `swagger` field at the top level. The full validation (refs,
 * schema) stays with the openapi source. The source declares it (SourceDefinition.specUpload):
 * POST /api/v2/add/openapi-upload and the web UI's file form serve it.
 */
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import type { SpecUploadDeclaration } from '../../core/define.ts';
import { RefdeskError } from '../../core/errors.ts';

/** The file name as shown in messages: at most 100 characters, control characters replaced. */
function shown(fileName: string): string {
  const s = fileName.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, '\uFFFD');
  return s.length > 100 ? s.slice(0, 100) + '...' : s;
}

function parseDocument(text: string): unknown {
  const body = text.replace(/^\uFEFF/, '');
  try {
    return JSON.parse(body);
  } catch {
    // not JSON: try YAML (JSON is YAML too, so this also covers JSON with comments and the like)
  }
  try {
    return parseYaml(body, { maxAliasCount: 100 });
  } catch {
    return undefined;
  }
}

/** Throws a 400 naming `fileName` unless the file at `path` looks like an OpenAPI or Swagger document. */
export async function checkOpenApiUpload(path: string, fileName: string): Promise<void> {
  const name = shown(fileName);
  const notSpec = (why: string): never => {
    throw new RefdeskError('invalid_request', `The uploaded file "${name}" is not an OpenAPI document: ${why}. Upload an OpenAPI 3 (openapi: 3.x) or Swagger 2 (swagger: "2.0") specification as JSON or YAML.`);
  };
  const data = await readFile(path);
  if (data.length === 0) notSpec('it is empty');
  if (data.subarray(0, 8000).includes(0)) notSpec('it is a binary file');
  const doc = parseDocument(data.toString('utf8'));
  if (doc === undefined) notSpec('it is neither valid JSON nor valid YAML');
  if (typeof doc === 'string' || typeof doc === 'number' || typeof doc === 'boolean') notSpec('it is plain text, not a JSON or YAML document');
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) notSpec('its top level is not an object');
  const d = doc as Record<string, unknown>;
  const version = d.openapi ?? d.swagger;
  if (version === undefined) notSpec('it has no "openapi" or "swagger" field at the top level');
  if (typeof version !== 'string' && typeof version !== 'number') notSpec(`its "${d.openapi !== undefined ? 'openapi' : 'swagger'}" field is not a version string`);
}

export const openApiSpecUpload: SpecUploadDeclaration = {
  specField: 'path',
  fileTitle: 'OpenAPI file',
  fileDescription: 'An OpenAPI 3.x or Swagger 2.0 document (JSON or YAML) from your computer.',
  specFormTitle: 'OpenAPI by URL',
  check: checkOpenApiUpload,
};
