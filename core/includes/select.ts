/**
 * What part of an included file a directive takes: line ranges, a named section (mkdocs
 * `--8<-- [start:name]`, AsciiDoc `tag::name[]`, VitePress `#region name`), rst
 * `:start-after:` / `:end-before:`; and the fence language of a file by its extension.
 */

const LANGUAGES: Record<string, string> = {
  py: 'python', js: 'javascript', mjs: 'javascript', cjs: 'javascript', ts: 'typescript', tsx: 'tsx', jsx: 'jsx', go: 'go', rs: 'rust',
  java: 'java', kt: 'kotlin', rb: 'ruby', sh: 'bash', bash: 'bash', zsh: 'bash', ps1: 'powershell', yaml: 'yaml', yml: 'yaml', json: 'json',
  toml: 'toml', ini: 'ini', html: 'html', css: 'css', scss: 'scss', c: 'c', h: 'c', cpp: 'cpp', cc: 'cpp', hpp: 'cpp', cs: 'csharp',
  php: 'php', swift: 'swift', sql: 'sql', md: 'markdown', mdx: 'markdown', markdown: 'markdown', dart: 'dart', scala: 'scala', ex: 'elixir',
  exs: 'elixir', lua: 'lua', r: 'r', vue: 'vue', svelte: 'svelte', graphql: 'graphql', proto: 'protobuf', xml: 'xml', dockerfile: 'dockerfile',
  tf: 'hcl',
};

/** The fence language of a file, from its name ('' when unknown; 'markdown' for Markdown). */
export function languageOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  if (name === 'dockerfile') return 'dockerfile';
  const dot = name.lastIndexOf('.');
  return dot >= 0 ? (LANGUAGES[name.slice(dot + 1)] ?? '') : '';
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A line that opens (`start`) or closes (`end`) the named section in any of the three styles. */
function sectionMarker(name: string, kind: 'start' | 'end'): RegExp {
  const n = escapeRegExp(name);
  const snippet = `--8<--\\s*\\[${kind}:${n}\\]`;
  const adoc = kind === 'start' ? `\\btag::${n}\\[\\]` : `\\bend::${n}\\[\\]`;
  const region = `#${kind === 'start' ? '' : 'end'}region\\s+${n}(?![\\w-])`;
  return new RegExp(`${snippet}|${adoc}|${region}`);
}

const ANY_MARKER = /--8<--\s*\[(start|end):[\w-]+\]|\b(tag|end)::[\w-]+\[\]|#(end)?region\b/;

/** Applies line ranges (`3-10,12`), a named section, or rst start-after/end-before. */
export function selectLines(text: string, options: Record<string, string>): string[] {
  let lines = text.replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n');
  const section = options.section ?? options.tag;
  if (section) {
    const start = lines.findIndex((l) => sectionMarker(section, 'start').test(l));
    const endRe = sectionMarker(section, 'end');
    const end = lines.findIndex((l, k) => k > start && endRe.test(l));
    if (start >= 0) lines = lines.slice(start + 1, end > start ? end : undefined);
  }
  if (options['start-after']) {
    const k = lines.findIndex((l) => l.includes(options['start-after']));
    if (k >= 0) lines = lines.slice(k + 1);
  }
  if (options['end-before']) {
    const k = lines.findIndex((l) => l.includes(options['end-before']));
    if (k >= 0) lines = lines.slice(0, k);
  }
  if (options.lines) {
    const picked: string[] = [];
    for (const part of options.lines.split(',')) {
      const [a, b] = part.split('-');
      const from = Math.max(1, Number(a) || 1);
      const to = b === undefined ? from : b === '' ? lines.length : Number(b) || lines.length;
      picked.push(...lines.slice(from - 1, to));
    }
    lines = picked;
  }
  // Section markers of other sections are not part of the text.
  return lines.filter((l) => !ANY_MARKER.test(l));
}

/** rst `:lines:` / AsciiDoc `lines=` use the same `a-b,c` syntax as our own options. */
export function includeOptions(options: Record<string, string>): Record<string, string> {
  const o: Record<string, string> = {};
  if (options.lines) o.lines = options.lines.replace(/\s/g, '');
  if (options.tag) o.tag = options.tag;
  if (options['start-after']) o['start-after'] = options['start-after'];
  if (options['end-before']) o['end-before'] = options['end-before'];
  return o;
}

/** A Markdown file's front matter (`---` or `+++` block at its top), which an include leaves out. */
export function stripFrontMatter(lines: string[]): string[] {
  if (lines.length === 0 || !/^(---|\+\+\+)\s*$/.test(lines[0])) return lines;
  const fence = lines[0].trim();
  for (let k = 1; k < lines.length; k++) {
    if (lines[k].trim() === fence) return lines.slice(k + 1);
  }
  return lines;
}
