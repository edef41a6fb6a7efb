/**
 * Public type declarations (.d.ts) as API documentation: one markdown section per exported
 * declaration, its TSDoc as the prose and the declaration as a `ts` fence, so the markdown
 * chunker makes one code snippet per declaration titled by its name and described by its TSDoc.
 *
 * This is a small scanner, not the TypeScript compiler (which is a dev dependency only): it
 * splits a declaration file into top-level statements (tracking comments, strings, template
 * literals and bracket depth), keeps the `/** ... *\/` comment right before each, and recurses
 * into `declare module '...'`, `declare global` and exported namespaces.
 */

export interface DtsStatement {
  text: string;
  /** The TSDoc comment right before the statement (raw, with its delimiters), or ''. */
  doc: string;
}

export interface ApiEntry {
  /** Display name (`Foo`, `ns.bar`, `default`). */
  name: string;
  kind: string;
  doc: string;
  /** The declaration(s), overloads joined. */
  code: string;
}

const BLOCK_HEAD = /^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:interface|class|namespace|module|enum|const\s+enum|global)\b/;
const CONTINUES = /(?:[|&=,(:?<]|=>|\bextends|\bkeyof|\btypeof)\s*$/;
const NEXT_STATEMENT = /^\s*(?:export|declare|import|interface|type|namespace|module|function|class|const|let|var|enum|abstract|\/\*\*)\b/;

/** Splits declaration source into top-level statements with their TSDoc. */
export function splitStatements(src: string): DtsStatement[] {
  const out: DtsStatement[] = [];
  let depth = 0;
  let start = -1;
  let pendingDoc = '';
  let docForStatement = '';
  const templates: number[] = []; // brace depth at which each open `${` returns to its template
  let i = 0;
  const n = src.length;

  const finish = (end: number) => {
    if (start >= 0) {
      const text = src.slice(start, end).trim();
      if (text && text !== ';') out.push({ text, doc: docForStatement });
    }
    start = -1;
    docForStatement = '';
  };

  const skipTemplate = (): void => {
    // i points after the opening backtick (or after the '}' closing a `${`)
    while (i < n) {
      const ch = src[i];
      if (ch === '\\') {
        i += 2;
        continue;
      }
      if (ch === '`') {
        i++;
        return;
      }
      if (ch === '$' && src[i + 1] === '{') {
        templates.push(depth);
        depth++;
        i += 2;
        return;
      }
      i++;
    }
  };

  while (i < n) {
    const ch = src[i];
    // Comments
    if (ch === '/' && src[i + 1] === '/') {
      const nl = src.indexOf('\n', i);
      i = nl < 0 ? n : nl;
      continue;
    }
    if (ch === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? n : end + 2;
      if (depth === 0 && start < 0 && src[i + 2] === '*') pendingDoc = src.slice(i, stop);
      i = stop;
      continue;
    }
    if (/\s/.test(ch)) {
      if (ch === '\n' && depth === 0 && start >= 0 && templates.length === 0) {
        // A statement without its ';': it ends here when the next line starts a new one.
        const soFar = src.slice(start, i).trimEnd();
        if (!CONTINUES.test(soFar) && NEXT_STATEMENT.test(src.slice(i + 1, i + 200))) {
          finish(i);
        }
      }
      i++;
      continue;
    }
    if (start < 0) {
      start = i;
      docForStatement = pendingDoc;
      pendingDoc = '';
    }
    if (ch === '"' || ch === "'") {
      i++;
      while (i < n && src[i] !== ch && src[i] !== '\n') i += src[i] === '\\' ? 2 : 1;
      i++;
      continue;
    }
    if (ch === '`') {
      i++;
      skipTemplate();
      continue;
    }
    if (ch === '{' || ch === '(' || ch === '[') {
      depth++;
      i++;
      continue;
    }
    if (ch === '}' || ch === ')' || ch === ']') {
      depth = Math.max(0, depth - 1);
      i++;
      if (ch === '}' && templates.length > 0 && templates[templates.length - 1] === depth) {
        templates.pop();
        skipTemplate();
        continue;
      }
      if (ch === '}' && depth === 0 && BLOCK_HEAD.test(src.slice(start, i))) {
        // `interface X {...}`, `declare namespace N {...}`: the block ends the statement.
        let j = i;
        while (j < n && /[ \t]/.test(src[j])) j++;
        if (src[j] === ';') j++;
        finish(j);
        i = j;
      }
      continue;
    }
    if (ch === ';' && depth === 0) {
      finish(i + 1);
      i++;
      continue;
    }
    i++;
  }
  finish(n);
  return out;
}

/** TSDoc to markdown prose: delimiters and leading '*' removed, tags made readable. */
export function tsdocToMarkdown(doc: string): string {
  if (!doc) return '';
  const body = doc
    .replace(/^\/\*\*+/, '')
    .replace(/\*+\/$/, '')
    .split('\n')
    .map((l) => l.replace(/^\s*\* ?/, '').trimEnd())
    .join('\n')
    .replace(/\{@(?:link|linkcode|linkplain)\s+([^}|\s]+)(?:[\s|]+([^}]*))?\}/g, (_m, target: string, label?: string) => '`' + (label?.trim() || target) + '`');
  const out: string[] = [];
  const lines = body.split('\n');
  let inExample = false;
  let exampleFenced = false;
  const closeExample = () => {
    while (out.length > 0 && out[out.length - 1] === '') out.pop();
    out.push('```');
  };
  for (const line of lines) {
    const tag = /^@(\w+)\s*(.*)$/.exec(line.trim());
    if (tag) {
      if (inExample && !exampleFenced && out.includes('```ts')) closeExample();
      inExample = false;
      const [, name, rest] = tag;
      if (name === 'param' || name === 'arg' || name === 'argument') {
        const m = /^(?:\{[^}]*\}\s*)?(\[?[\w$.]+(?:=[^\]]*)?\]?)\s*(?:-\s*)?(.*)$/.exec(rest);
        out.push(m ? `- \`${m[1].replace(/^\[|\]$/g, '').split('=')[0]}\`: ${m[2]}` : `- ${rest}`);
      } else if (name === 'returns' || name === 'return') {
        out.push(`Returns: ${rest.replace(/^\{[^}]*\}\s*/, '')}`);
      } else if (name === 'throws') {
        out.push(`Throws: ${rest}`);
      } else if (name === 'deprecated') {
        out.push(`**Deprecated.** ${rest}`.trim());
      } else if (name === 'example') {
        inExample = true;
        exampleFenced = false;
        out.push('', rest ? `Example: ${rest}` : 'Example:', '');
      } else if (name === 'remarks') {
        if (rest) out.push(rest);
      } else if (name !== 'internal' && name !== 'public' && name !== 'packageDocumentation') {
        out.push(`${name[0].toUpperCase()}${name.slice(1)}: ${rest}`.trim());
      }
      continue;
    }
    if (inExample) {
      if (/^\s*```/.test(line)) exampleFenced = true;
      else if (!exampleFenced && line.trim() !== '' && out[out.length - 1] === '') out.push('```ts');
    }
    out.push(line);
  }
  if (inExample && !exampleFenced && out.includes('```ts')) closeExample();
  return out.join('\n').replace(/\n{3,}/g, '\n\n').trim();
}

const DECL = /^(export\s+)?(default\s+)?(declare\s+)?(abstract\s+)?(async\s+)?(function|class|interface|type|enum|const\s+enum|const|let|var|namespace|module|global)\b\s*(\*?\s*[A-Za-z_$][\w$]*|'[^']*'|"[^"]*")?/;

/** Names a module file exports through `export = X`, `export default X` or `export { a, b as c }`. */
function exportedNames(statements: DtsStatement[]): Set<string> {
  const names = new Set<string>();
  for (const s of statements) {
    let m = /^export\s*=\s*([A-Za-z_$][\w$]*)/.exec(s.text) ?? /^export\s+default\s+([A-Za-z_$][\w$]*)\s*;?$/.exec(s.text);
    if (m) names.add(m[1]);
    m = /^export\s*(?:type\s*)?\{([^}]*)\}\s*;?$/.exec(s.text);
    if (m) for (const part of m[1].split(',')) names.add(part.trim().split(/\s+as\s+/)[0].replace(/^type\s+/, ''));
  }
  return names;
}

/** The exported API of one declaration file, in source order; overloads are merged. */
export function extractApi(src: string, prefix = '', forceExport = false): ApiEntry[] {
  const statements = splitStatements(src);
  const isModule = statements.some((s) => /^(import|export)\b/.test(s.text));
  const named = exportedNames(statements);
  const out: ApiEntry[] = [];
  for (const s of statements) {
    const m = DECL.exec(s.text);
    if (!m) continue;
    const kind = m[6].replace(/\s+/g, ' ');
    const rawName = (m[7] ?? '').replace(/^\*\s*/, '').trim();
    const name = rawName.replace(/^['"]|['"]$/g, '');
    const exported = forceExport || !!m[1] || !isModule || named.has(name);
    if (kind === 'module' || kind === 'namespace' || kind === 'global') {
      // `declare module 'x' {}` and `declare global {}` hold public declarations; a namespace only when exported.
      const ambient = kind === 'global' || /^['"]/.test(rawName);
      if (!ambient && !exported) continue;
      const body = s.text.slice(s.text.indexOf('{') + 1, s.text.lastIndexOf('}'));
      const inner = ambient ? '' : `${prefix}${name}.`;
      out.push(...extractApi(body, inner, ambient ? false : true));
      continue;
    }
    if (!exported) continue;
    const display = `${prefix}${m[2] && !name ? 'default' : name || 'default'}`;
    const code = dedent(s.text);
    const last = out[out.length - 1];
    if (last && last.name === display && last.kind === kind && kind === 'function') {
      last.code += '\n' + code;
      if (!last.doc && s.doc) last.doc = s.doc;
      continue;
    }
    out.push({ name: display, kind, doc: s.doc, code });
  }
  return out;
}

function dedent(text: string): string {
  const lines = text.split('\n');
  const indents = lines.slice(1).filter((l) => l.trim()).map((l) => /^\s*/.exec(l)![0].length);
  const cut = Math.min(...indents, Infinity);
  if (!Number.isFinite(cut) || cut === 0) return text;
  // The first line was trimmed already; the rest keep their relative indentation.
  return [lines[0], ...lines.slice(1).map((l) => l.slice(Math.min(cut, /^\s*/.exec(l)![0].length)))].join('\n');
}

/** A declaration file as a markdown page: `# <pkg> API: <file>`, one `##` section per declaration. */
export function dtsToMarkdown(src: string, pkg: string, file: string): { markdown: string; count: number } {
  const api = extractApi(src);
  const parts = [`# ${pkg} API: ${file}`, '', `Type declarations of the \`${pkg}\` package (\`${file}\`).`, ''];
  for (const e of api) {
    const prose = tsdocToMarkdown(e.doc) || `The \`${e.name}\` ${e.kind} of \`${pkg}\`.`;
    const fence = e.code.includes('```') ? '~~~~' : '```';
    parts.push(`## ${e.name}`, '', prose, '', `${fence}ts`, e.code, fence, '');
  }
  return { markdown: parts.join('\n'), count: api.length };
}

/** Relative module specifiers a declaration file imports or re-exports (`./x`, `../y.js`). */
export function relativeImports(src: string): string[] {
  const out = new Set<string>();
  for (const m of src.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\1/g)) out.add(m[2]);
  for (const m of src.matchAll(/\/\/\/\s*<reference\s+path\s*=\s*(['"])([^'"]+)\1/g)) out.add(m[2].startsWith('.') ? m[2] : `./${m[2]}`);
  return [...out];
}
