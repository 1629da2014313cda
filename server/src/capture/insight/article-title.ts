/**
 * The article's own title (docs/page-insight.md, "Article metadata"): the headline a reader sees
 * (an `<h1>` that the page's declared titles agree with, else a rendered `<h1>` inside the article),
 * else the declared title (Open Graph, JSON-LD headline, Twitter, microdata, `document.title`)
 * without the site's name.
 */

const SEPARATOR = String.raw`\s+[|\-–—:·•»/~]{1,2}\s+|\s*[|·•»｜]\s*|\s*[:：]\s*(?=[^:：]*$)|_`;

/** Letters and digits only, lower case: how two spellings of one title or name are compared. */
export const letters = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

export interface TitleSources {
  /** The page's h1s in page order. */
  headings: Array<{ text: string; inArticle: boolean; visible: boolean }>;
  /** Declared titles, most trusted first: og:title, the JSON-LD headline, twitter:title, microdata headline. */
  declared: string[];
  documentTitle: string;
  /** The site's names as letters (letters()): og:site_name, application-name, publisher, host. */
  sites: string[];
}

function isSite(part: string, sites: string[]): boolean {
  const name = letters(part);
  return (
    name.length >= 2 &&
    sites.some((site) => site === name || (site.length >= 4 && name.length >= 4 && (site.includes(name) || name.includes(site))))
  );
}

/** A title without the site's name before or after a separator ("Story | Site", "Site - Story", "Story_Section_Site"). */
export function withoutSiteName(title: string, sites: string[]): string {
  const parts = title.split(new RegExp(`(${SEPARATOR})`));
  // parts alternate text, separator, text, …; a name can take several parts ("Story | Section | Site").
  for (let end = parts.length - 1; end >= 2; end -= 2) {
    if (!isSite(parts[end]!, sites)) continue;
    const kept = parts
      .slice(0, end - 1)
      .join('')
      .trim();
    if (letters(kept).length >= 2) return withoutSiteName(kept, sites);
  }
  if (parts.length >= 3 && isSite(parts[0]!, sites)) return parts.slice(2).join('').trim();
  return title.trim();
}

/**
 * Two spellings of one title: one contains the other, compared as letters and digits, and is at
 * least 40 % of it (a site's name in an h1 is in every title of the site, and is not the article's).
 */
function agree(a: string, b: string): boolean {
  const [x, y] = [letters(a), letters(b)];
  if (Math.min(x.length, y.length) < 4) return x === y && x.length > 0;
  return (x.includes(y) || y.includes(x)) && Math.min(x.length, y.length) >= 0.4 * Math.max(x.length, y.length);
}

export function chooseTitle({ headings, declared, documentTitle, sites }: TitleSources): string | null {
  const titles = [...declared, documentTitle].map((title) => withoutSiteName(title, sites)).filter((title) => letters(title).length > 0);
  const readable = headings.filter((heading) => !isSite(heading.text, sites) && letters(heading.text).length > 0);
  const seen = [...readable.filter((heading) => heading.visible), ...readable.filter((heading) => !heading.visible)];
  const agreed = seen.find((heading) => titles.some((title) => agree(heading.text, title)));
  if (agreed) return agreed.text;
  const inArticle = seen.find((heading) => heading.inArticle && heading.visible);
  return inArticle?.text ?? titles[0] ?? seen[0]?.text ?? null;
}
