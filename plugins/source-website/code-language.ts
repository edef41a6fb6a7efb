/** The language of a code block, from the class names and data attributes highlighters leave. */

const NO_LANGUAGE = new Set(['none', 'text', 'plain', 'plaintext', 'txt', 'default', 'nohighlight', 'no-highlight', 'output']);
const CLASS_PATTERNS = [
  /^(?:language|lang)-([\w+#.-]+)$/i,
  /^highlight-(?:source-|text-)?([\w+#.-]+)$/i,
  /^brush:([\w+#.-]+)$/i,
];

function fromElement(el: Element): string | null {
  for (const attr of ['data-language', 'data-lang', 'lang']) {
    const v = el.getAttribute(attr);
    // `lang` is a natural-language tag on most elements; only trust it on code and pre.
    if (v && (attr !== 'lang' || el.tagName === 'CODE' || el.tagName === 'PRE') && /^[\w+#.-]{1,30}$/.test(v) && !(attr === 'lang' && /^[a-z]{2}(-[A-Z]{2})?$/.test(v))) return v;
  }
  const classes = (el.getAttribute('class') ?? '').replace(/brush:\s+/gi, 'brush:').split(/\s+/).filter(Boolean);
  for (const c of classes) {
    for (const re of CLASS_PATTERNS) {
      const m = re.exec(c);
      if (m) return m[1];
    }
  }
  // pandoc: <pre class="sourceCode python">
  const i = classes.indexOf('sourceCode');
  if (i >= 0 && classes[i + 1]) return classes[i + 1];
  return null;
}

/**
 * Looks at the <pre>, its <code> child, and up to three ancestors (highlighters wrap blocks in
 * `<div class="highlight-python">` or `<div class="language-ts">`). Returns a lower-case name,
 * or '' when the block names no language.
 */
export function codeLanguage(pre: Element): string {
  const code = pre.querySelector(':scope > code') ?? pre.querySelector('code');
  const chain: Element[] = [];
  if (code) chain.push(code);
  chain.push(pre);
  let up = pre.parentElement;
  // An ancestor speaks for this block only when it holds no other one.
  for (let i = 0; i < 3 && up && up.querySelectorAll('pre').length === 1; i++, up = up.parentElement) chain.push(up);
  for (const el of chain) {
    const lang = fromElement(el);
    if (lang !== null) return NO_LANGUAGE.has(lang.toLowerCase()) ? '' : lang.toLowerCase();
  }
  return '';
}
