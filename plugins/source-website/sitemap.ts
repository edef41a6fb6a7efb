/** sitemap.xml: a `<urlset>` of page URLs, a `<sitemapindex>` of further sitemaps, or a plain list. */

export interface ParsedSitemap {
  /** `index`: the locations are sitemaps; `urls`: they are pages. */
  kind: 'index' | 'urls';
  locations: string[];
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeXml(s: string): string {
  return s
    .replace(/^<!\[CDATA\[([\s\S]*)\]\]>$/, '$1')
    .replace(/&(amp|lt|gt|quot|apos);|&#(\d+);|&#x([0-9a-f]+);/gi, (m, name: string | undefined, dec: string | undefined, hex: string | undefined) => {
      if (name) return ENTITIES[name.toLowerCase()] ?? m;
      const code = dec ? Number(dec) : parseInt(hex!, 16);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    })
    .trim();
}

/** Reads the locations of a sitemap body; unusable entries are dropped. */
export function parseSitemap(body: string, base: URL): ParsedSitemap {
  const isXml = /<(?:[\w-]+:)?(?:urlset|sitemapindex)[\s>]/.test(body);
  const raw: string[] = [];
  if (isXml) {
    for (const m of body.matchAll(/<(?:[\w-]+:)?loc>([\s\S]*?)<\/(?:[\w-]+:)?loc>/g)) raw.push(decodeXml(m[1]));
  } else {
    for (const line of body.split(/\r?\n/)) if (/^https?:\/\//i.test(line.trim())) raw.push(line.trim());
  }
  const locations: string[] = [];
  for (const r of raw) {
    try {
      locations.push(new URL(r, base).href);
    } catch {
      // skip an invalid location
    }
  }
  return { kind: /<(?:[\w-]+:)?sitemapindex[\s>]/.test(body) ? 'index' : 'urls', locations };
}
