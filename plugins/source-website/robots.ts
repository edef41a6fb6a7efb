/**
 * robots.txt (RFC 9309): the group for our agent (or `*`), Allow/Disallow by longest match
 * (Allow wins a tie), `*` and `$` in rules, Crawl-delay, and Sitemap lines.
 */

export interface RobotsRules {
  /** True when the path (with its query) may be fetched. */
  allows(pathAndQuery: string): boolean;
  /** Crawl-delay of the chosen group, in ms, or null. */
  crawlDelayMs: number | null;
  /** Sitemap URLs listed anywhere in the file (absolute). */
  sitemaps: string[];
}

interface Rule {
  allow: boolean;
  pattern: string;
  re: RegExp;
}

interface Group {
  agents: string[];
  rules: Rule[];
  crawlDelay: number | null;
}

/** Everything is allowed (no robots.txt, or a 4xx for it). */
export const ALLOW_ALL: RobotsRules = { allows: () => true, crawlDelayMs: null, sitemaps: [] };
/** Nothing is allowed (robots.txt could not be read because of a server error). */
export const DISALLOW_ALL: RobotsRules = { allows: () => false, crawlDelayMs: null, sitemaps: [] };

/** The product token robots.txt groups are matched against: the User-Agent's first word. */
export function robotsAgentName(userAgent: string): string {
  return (userAgent.trim().split(/[\s/]/)[0] ?? '').toLowerCase();
}

function ruleRegExp(pattern: string): RegExp {
  const endAnchor = pattern.endsWith('$');
  const body = endAnchor ? pattern.slice(0, -1) : pattern;
  const src = body
    .split('*')
    .map((part) => normalizeEncoding(part).replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${src}${endAnchor ? '$' : ''}`);
}

/** Upper-cases percent escapes and percent-encodes what a URL would, so rules and paths compare alike. */
function normalizeEncoding(s: string): string {
  return s.replace(/%[0-9a-f]{2}/gi, (m) => m.toUpperCase()).replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
}

/** Parses a robots.txt body for one agent name (lower case, as `robotsAgentName` gives it). */
export function parseRobots(text: string, agent: string, base: URL): RobotsRules {
  const groups: Group[] = [];
  const sitemaps: string[] = [];
  let current: Group | null = null;
  let lastWasAgent = false;
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const line = raw.replace(/#.*$/, '').trim();
    const m = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line);
    if (!m) continue;
    const key = m[1].toLowerCase();
    const value = m[2].trim();
    if (key === 'user-agent') {
      if (!lastWasAgent || !current) {
        current = { agents: [], rules: [], crawlDelay: null };
        groups.push(current);
      }
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
      continue;
    }
    lastWasAgent = false;
    if (key === 'sitemap') {
      try {
        sitemaps.push(new URL(value, base).href);
      } catch {
        // an unusable Sitemap line is ignored
      }
      continue;
    }
    if (!current) continue;
    if (key === 'allow' || key === 'disallow') {
      if (value === '') continue;
      const pattern = value.startsWith('/') || value.startsWith('*') ? value : `/${value}`;
      current.rules.push({ allow: key === 'allow', pattern, re: ruleRegExp(pattern) });
    } else if (key === 'crawl-delay') {
      const seconds = Number(value);
      if (Number.isFinite(seconds) && seconds >= 0) current.crawlDelay = seconds;
    }
  }
  const mine = groups.filter((g) => g.agents.some((a) => a !== '*' && a === agent));
  const chosen = mine.length > 0 ? mine : groups.filter((g) => g.agents.includes('*'));
  const rules = chosen.flatMap((g) => g.rules);
  const delays = chosen.map((g) => g.crawlDelay).filter((d): d is number => d !== null);
  return {
    allows(pathAndQuery: string): boolean {
      if (pathAndQuery === '/robots.txt') return true;
      const path = normalizeEncoding(pathAndQuery);
      let best: Rule | null = null;
      for (const r of rules) {
        if (!r.re.test(path)) continue;
        if (!best || r.pattern.length > best.pattern.length || (r.pattern.length === best.pattern.length && r.allow && !best.allow)) best = r;
      }
      return best === null || best.allow;
    },
    crawlDelayMs: delays.length > 0 ? Math.max(...delays) * 1000 : null,
    sitemaps,
  };
}
