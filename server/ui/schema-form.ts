/**
 * Forms built from a JSON Schema (a source's add payload, as GET /api/sources serves it), and the
 * posted form read back into the object the schema describes. So every source kind, a
 * third-party plugin's too, gets a form without a list of kinds in the UI:
 *
 *   strings -> text inputs (`writeOnly` secrets: password inputs, never filled back in)
 *   enums -> selects          booleans -> checkboxes        integers, numbers -> number inputs
 *   arrays of strings -> a textarea, one per line            nested objects -> fieldsets
 *   anything else -> a textarea of JSON
 *
 * Each field has a label, its schema `description` as a hint (aria-describedby) and `required`
 * marked. Field names are the property paths (`spec.url`, `spec.auth.user`), ids derived from them.
 */
import type { JsonSchema } from '../../core/define.ts';

type Schema = Record<string, unknown>;

export type FieldKind = 'text' | 'password' | 'select' | 'checkbox' | 'number' | 'lines' | 'json' | 'fieldset';

/** One field as views/add/fields.eta renders it. */
export interface FormField {
  kind: FieldKind;
  /** The form field name: the property path, e.g. `spec.url`. */
  name: string;
  /** The element id (from the name). */
  id: string;
  label: string;
  required: boolean;
  hint: string;
  /** The value to show (never a secret's). */
  value: string;
  checked: boolean;
  /** Select options: [value, text]; the first is '' (the default) unless required. */
  options: Array<[string, string]>;
  /** Number inputs: 'any' or '1'; min and max when the schema has them. */
  step: string;
  min: string;
  max: string;
  /** The message beside the field after a failed post. */
  error: string;
  /** A fieldset's fields. */
  children: FormField[];
}

const WORDS: Record<string, string> = { url: 'URL', id: 'ID', api: 'API', ms: '(ms)', llms: 'llms', txt: 'txt', pypi: 'PyPI', npm: 'npm' };

/** `rootPageId` -> `Root page ID`, `max_pages` -> `Max pages` (a schema `title` wins). */
export function labelOf(name: string, schema: Schema): string {
  if (typeof schema.title === 'string' && schema.title.trim()) return schema.title.trim();
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter(Boolean)
    .map((w) => WORDS[w.toLowerCase()] ?? w.toLowerCase());
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

const idOf = (name: string) => `f-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;

function typesOf(schema: Schema): string[] {
  const t = schema.type;
  return Array.isArray(t) ? t.map(String) : typeof t === 'string' ? [t] : [];
}

function kindOf(schema: Schema): FieldKind {
  if (Array.isArray(schema.enum)) return 'select';
  const types = typesOf(schema);
  if (types.includes('object') && schema.properties && typeof schema.properties === 'object') return 'fieldset';
  if (types.includes('boolean')) return 'checkbox';
  if (types.includes('integer') || types.includes('number')) return 'number';
  if (types.includes('array')) {
    const items = (schema.items ?? {}) as Schema;
    return typesOf(items).includes('string') && !Array.isArray(items.enum) ? 'lines' : 'json';
  }
  if (types.includes('string') || types.length === 0) return schema.writeOnly === true ? 'password' : 'text';
  return 'json';
}

function propertiesOf(schema: Schema): Array<[string, Schema]> {
  const props = (schema.properties ?? {}) as Record<string, unknown>;
  return Object.entries(props).filter((e): e is [string, Schema] => typeof e[1] === 'object' && e[1] !== null);
}

export interface BuildOptions {
  /** Posted values to show again (by field name); secrets are never taken from here. */
  values?: Record<string, string>;
  /** Messages beside fields (by field name). */
  errors?: Record<string, string>;
  /** Top-level properties to leave out (e.g. a server path a browser cannot give). */
  omit?: readonly string[];
}

/** The fields of an object schema, named under `prefix` (e.g. 'spec'; '' for top-level names). */
export function schemaFields(schema: JsonSchema, prefix: string, opts: BuildOptions = {}): FormField[] {
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const values = opts.values ?? {};
  const errors = opts.errors ?? {};
  return propertiesOf(schema)
    .filter(([key]) => !(opts.omit ?? []).includes(key))
    .map(([key, prop]) => {
      const name = prefix ? `${prefix}.${key}` : key;
      const kind = kindOf(prop);
      const given = values[name];
      const isRequired = required.has(key);
      const field: FormField = {
        kind,
        name,
        id: idOf(name),
        label: labelOf(key, prop),
        required: isRequired,
        hint: typeof prop.description === 'string' ? prop.description : '',
        value: kind === 'password' ? '' : (given ?? defaultText(prop, kind)),
        checked: kind === 'checkbox' && (given !== undefined ? given === 'true' : prop.default === true),
        options: kind === 'select' ? [...(isRequired ? [] : [['', '(default)'] as [string, string]]), ...(prop.enum as unknown[]).map((v) => [String(v), String(v)] as [string, string])] : [],
        step: typesOf(prop).includes('integer') ? '1' : 'any',
        min: typeof prop.minimum === 'number' ? String(prop.minimum) : '',
        max: typeof prop.maximum === 'number' ? String(prop.maximum) : '',
        error: errors[name] ?? '',
        children: kind === 'fieldset' ? schemaFields(prop, name, { values, errors }) : [],
      };
      return field;
    });
}

function defaultText(prop: Schema, kind: FieldKind): string {
  const d = prop.default;
  if (d === undefined || kind === 'checkbox') return '';
  if (kind === 'lines' && Array.isArray(d)) return d.map(String).join('\n');
  if (kind === 'json') return JSON.stringify(d);
  return typeof d === 'object' ? '' : String(d);
}

/** The values a failed post shows again: every posted field but the schema's secrets. */
export function keptValues(schema: JsonSchema, prefix: string, form: Record<string, string>): Record<string, string> {
  const secrets = new Set<string>();
  const walk = (s: Schema, p: string) => {
    for (const [key, prop] of propertiesOf(s)) {
      const name = p ? `${p}.${key}` : key;
      if (prop.writeOnly === true) secrets.add(name);
      if (kindOf(prop) === 'fieldset') walk(prop, name);
    }
  };
  walk(schema, prefix);
  return Object.fromEntries(Object.entries(form).filter(([k]) => k !== '_csrf' && !secrets.has(k)));
}

export interface ReadResult {
  value: Record<string, unknown>;
  /** Messages by field name for what could not be read (a number that is not one, bad JSON). */
  errors: Record<string, string>;
}

/**
 * The object a posted form describes: empty fields are left out (the source's defaults apply),
 * an unchecked checkbox is false only where the schema's default is true, lines are trimmed.
 */
export function readSchemaForm(schema: JsonSchema, prefix: string, form: Record<string, string>): ReadResult {
  const errors: Record<string, string> = {};
  const read = (s: Schema, p: string): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [key, prop] of propertiesOf(s)) {
      const name = p ? `${p}.${key}` : key;
      const kind = kindOf(prop);
      const raw = form[name];
      if (kind === 'fieldset') {
        const inner = read(prop, name);
        if (Object.keys(inner).length > 0) out[key] = inner;
        continue;
      }
      if (kind === 'checkbox') {
        if (raw !== undefined) out[key] = true;
        else if (prop.default === true) out[key] = false;
        continue;
      }
      const text = kind === 'password' ? (raw ?? '') : (raw ?? '').trim();
      if (text === '') continue;
      if (kind === 'select') {
        const match = (prop.enum as unknown[]).find((v) => String(v) === text);
        if (match === undefined) errors[name] = `Choose one of: ${(prop.enum as unknown[]).map(String).join(', ')}.`;
        else out[key] = match;
      } else if (kind === 'number') {
        const integer = typesOf(prop).includes('integer') && !typesOf(prop).includes('number');
        const n = Number(text);
        if (!Number.isFinite(n) || (integer && !/^-?\d+$/.test(text))) errors[name] = integer ? 'Give a whole number.' : 'Give a number.';
        else out[key] = n;
      } else if (kind === 'lines') {
        const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
        if (lines.length > 0) out[key] = lines;
      } else if (kind === 'json') {
        try {
          out[key] = JSON.parse(text);
        } catch {
          errors[name] = 'Give a JSON value.';
        }
      } else out[key] = text;
    }
    return out;
  };
  return { value: read(schema, prefix), errors };
}

/**
 * Problems of core/validate.ts (`spec.url: must match ...`, `spec: missing required property
 * "url"`) by the field they are about; those about no one field go under ''.
 */
export function problemsByField(problems: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const problem of problems) {
    const m = /^([A-Za-z0-9_$.[\]-]*): (.*)$/s.exec(problem);
    let field = m ? m[1].replace(/\[\d+\]/g, '') : '';
    let message = m ? m[2] : problem;
    const missing = /^missing required property "([^"]+)"$/.exec(message);
    if (missing) {
      field = field ? `${field}.${missing[1]}` : missing[1];
      message = 'Required.';
    } else if (/^unknown property "/.test(message)) field = '';
    message = message.charAt(0).toUpperCase() + message.slice(1);
    out[field] = out[field] ? `${out[field]} ${message}` : message;
  }
  return out;
}
