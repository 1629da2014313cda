/**
 * The article's authors (docs/page-insight.md, "Article metadata"). What the page declares
 * (JSON-LD, `<meta>`, microdata) is preferred when the byline a reader sees near the headline
 * names the same people; else that visible byline; else the first declared value. Names come out
 * as bylines write them: "By" and the like removed, the date or role a byline runs on into cut
 * off, and a list of names joined the way a byline reads ("Ann Lee, Bo Chan and Cy Diaz").
 */
import { letters } from './article-title.js';

/** The words a byline starts with before the names, in the languages news pages are most often in. */
const LEAD = /^(?:(?:written|posted|published|words|text|story|reporting|report|photos?|video)\s+)?(?:by|von|par|por|door)\s*[:\-–—]?\s+/i;
/** "ByJane Doe": the lead word run into the name by the markup. */
const LEAD_JOINED = /^By(?=\p{Lu}|by\s)/u;
/** Short lead words that are also the start of surnames (Di Stefano, Da Silva) count in lower case only. */
const LEAD_LOWER = /^(?:di|da|av|af)\s+(?=\p{Lu})/u;
const LEAD_BARE = /^(?:by|author|authors|written by|posted by|posted|autor|auteur|著者|作者|筆者|記者|记者|文)\s*[:：]\s*/i;
const MONTH = String.raw`(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?`;
/** A job title after the name: "Staff Writer", "Senior Politics Editor". */
const ROLE = String.raw`(?:(?:senior|chief|staff|contributing|deputy|associate|executive|managing|political|politics|national|foreign|special|guest|opinion|tech|technology|science|sports|business|features|culture|news|white house)\s+){0,3}(?:editor|writer|reporter|correspondent|contributor|columnist|fellow|producer|critic)\b`;
/** Where a byline stops naming people: a date, a time, an update note, a separator, an e-mail address. */
const TAIL = new RegExp(
  String.raw`\s*(?:[|•·]|\s[-–—]\s|\s\/\s|\b(?:updated|published|posted|last updated|modified|on|le|am|il)\b\s*:?\s*(?=\d|${MONTH}\s+\d)|\b${MONTH}\s+\d{1,2}(?:st|nd|rd|th)?\b|\d{4}年|\b\d{1,2}\s+${MONTH}\s+\d{4}|\b\d{4}-\d{2}-\d{2}|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}|\b\d{1,2}:\d{2}\b|\b\d+\s+(?:minutes?|hours?|days?|mins?|hrs?)\s+ago\b|\b\d+\s*min(?:ute)?s?\.?\s+read\b|\S+@\S+|\s(?:published|updated|posted)\b|\s*[(（]|\s${ROLE}).*$`,
  'i',
);
/** Texts byline-like elements hold that are not names. */
const NOT_A_NAME =
  /^(?:by|author|authors|about the authors?|written by|posted by|more|share|follow|follow us|contact|email|e-mail|facebook|twitter|linkedin|instagram|subscribe|staff|admin|administrator|guest|anonymous|unknown|null|undefined|none|editor|editors|read more|view all posts|see all|all posts|more from this author|more by this author|bio|profile|\d+ comments?|著者|作者|筆者|記者|记者)$/i;
/** Byline-like elements that hold something else: a photo credit, a bio, a share button, a date. */
const NOT_A_BYLINE =
  /credit|caption|photo|image|img|avatar|thumb|bio\b|bio[-_]|description|about|social|twitter|email|mail|rss|archive|more|date|time|comment|role|job|position|count|icon|label|title|prefix/;

export function clean(text: string): string {
  return text.replace(/[\s\u00a0\u200b]+/g, ' ').trim();
}

/** Plausibly one or more people's (or a desk's) names: short, not a link, a date or a button label. */
export function isName(text: string): boolean {
  if (text.length < 2 || text.length > 120 || NOT_A_NAME.test(text)) return false;
  if (/^(?:https?:|www\.|\/)|[@<>{}=]|\.(?:com|org|net|html?)\b/i.test(text)) return false;
  if (!/\p{L}/u.test(text) || /\d{3,}/.test(text)) return false;
  return text.split(' ').length <= 16;
}

/** One line of a byline without its lead words and tail; null when what is left is not a name. */
function cleanLine(line: string): string | null {
  let text = clean(line).replace(LEAD_BARE, '').replace(LEAD_JOINED, '');
  // "Wednesday January 18, 2017 10:44 am by Juli Clover": the name after a dateline.
  text = text.replace(/^.*\d.*?\s(?:by|von|par|por)\s+(?=\p{L})/iu, '');
  for (let i = 0; i < 2; i++) text = text.replace(LEAD, '').replace(LEAD_LOWER, '');
  // "Julia Carrie Wong in San Francisco": the dateline's place.
  text = text.replace(/\s+in\s+\p{Lu}.*$/u, '');
  text = text.replace(TAIL, '').replace(/^[\s,;:|·•\-–—]+|[\s,;:|·•\-–—]+$/g, '');
  return isName(text) ? text : null;
}

/**
 * A byline's names as written: the first line that holds a name once "By", dates and roles are cut
 * (a lone "By" line joins the next one).
 */
export function cleanByline(raw: string): string | null {
  const lines = raw.split('\n').map(clean).filter(Boolean);
  for (let i = 0; i < lines.length && i < 4; i++) {
    const line = /^(?:by|von|par|por|door)$/i.test(lines[i]!) && lines[i + 1] ? `${lines[i]} ${lines[++i]}` : lines[i]!;
    const name = cleanLine(line);
    if (name) return name;
  }
  return null;
}

/** "Ann Lee", "Ann Lee and Bo Chan", "Ann Lee, Bo Chan and Cy Diaz". */
export function joinNames(names: string[]): string {
  if (names.length <= 1) return names[0] ?? '';
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/** The names of a byline, one per person. */
export function splitNames(byline: string): string[] {
  const parts = byline.split(/\s*[,;&、，]\s*|\s+(?:and|und|et|y|e|en|og|och|и)\s+/i).map((name) => name.trim());
  // Split only where every part is a name ("Mac & i" is one).
  return parts.every((name) => isName(name)) ? distinctNames(parts) : [byline];
}

/** Distinct names in their first order, compared without case or spacing. */
export function distinctNames(names: string[]): string[] {
  const seen = new Set<string>();
  return names.filter((name) => {
    const key = letters(name);
    if (!key || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export interface Authors {
  byline: string | null;
  names: string[];
}

/** Names given one per value (a JSON-LD list, repeated meta tags): joined as a byline. */
export function fromNames(values: string[]): Authors | null {
  const names = distinctNames(values.map((value) => cleanByline(value)).filter((name): name is string => !!name));
  return names.length ? { byline: joinNames(names), names } : null;
}

/** One value that may name several people ("By Ann Lee and Bo Chan"): kept as written. */
export function fromByline(value: string | undefined): Authors | null {
  const byline = value ? cleanByline(value) : null;
  return byline ? { byline, names: splitNames(byline) } : null;
}

const PARTICLES = /^(?:de|del|della|der|den|des|di|da|du|dos|van|von|la|le|bin|ibn|al|el|y|e|zu|ten|ter)$/i;

/** Names as people write them: one to five words each, capitalised but for particles (scripts without case pass). */
export function looksLikeNames(authors: Authors): boolean {
  return authors.names.every((name) => {
    const words = name.split(' ');
    return words.length <= 5 && words.every((word) => PARTICLES.test(word) || !/^\p{Ll}/u.test(word));
  });
}

/** A byline found in plain text, which must read as names ("By then, the keepers had left" does not). */
export function fromText(value: string | undefined): Authors | null {
  const found = fromByline(value);
  return found && looksLikeNames(found) ? found : null;
}

export interface BylineElement {
  hint: string;
  text: string;
  near: boolean;
}

/**
 * The byline a reader sees: the first byline-like element near the headline that holds names
 * (elements that hold one author's name each, like several `rel=author` links, are joined).
 * Without one near the headline, an element marked as an author's name or link anywhere.
 */
export function visibleByline(elements: BylineElement[]): Authors | null {
  const usable = elements.filter(
    (element) => !NOT_A_BYLINE.test(element.hint.replace(/\bauthor[-_]?name\b|\bname\b/g, '')) || /name/.test(element.hint),
  );
  const pick = (candidates: BylineElement[], read = fromByline): Authors | null => {
    for (const element of candidates) {
      const found = read(element.text);
      if (!found) continue;
      // One name per element: its siblings of the same kind name the co-authors.
      const same = candidates.filter((other) => other.hint === element.hint && other.near === element.near);
      if (same.length > 1 && found.names.length === 1) {
        const all = fromNames(same.map((other) => other.text));
        if (all && all.names.length > 1 && all.names.length <= 6) return all;
      }
      return found;
    }
    return null;
  };
  return (
    pick(usable.filter((element) => element.near)) ??
    pick(usable.filter((element) => /author-link|\brel=|author[-_]?name|byline[-_]?name|\bname\b/.test(element.hint))) ??
    pick(usable, fromText)
  );
}

/** A "By …" line in the text under the headline, where a page marks its byline with no class. */
export function bylineInText(text: string): Authors | null {
  const lines = text.split('\n').slice(0, 20);
  const line = lines.find((candidate) => /^(?:by|von|par|por|door)\s+\S/i.test(candidate) && candidate.length < 150);
  return line ? fromText(line) : null;
}

/**
 * Names from profile links (`article:author` is often `…/profile/julia-carrie-wong`), as the
 * page writes them: the link's last path segment, word by word, found in the text by the headline.
 */
export function namesFromProfileLinks(values: string[], text: string): Authors | null {
  const names: string[] = [];
  for (const link of values.flatMap((value) => value.split(/\s*,\s*/))) {
    const segment = /^https?:\/\/[^/]+\/(?:[^?#]*\/)?([^/?#]+)\/?(?:[?#].*)?$/i.exec(link)?.[1] ?? '';
    const words = decodeURIComponent(segment)
      .split(/[-_.+]+/)
      .filter((word) => /^\p{L}+$/u.test(word));
    if (words.length < 2 || words.length > 4) continue;
    const pattern = new RegExp(`(?<![\\p{L}])${words.join('[\\s.\\-]+(?:\\p{L}\\.?\\s+)?')}(?![\\p{L}])`, 'iu');
    const found = pattern.exec(text)?.[0];
    if (found) names.push(found);
  }
  return fromNames(names);
}

/**
 * Every name of the candidate appears in the text around the headline, in the same order and
 * close together ("Gillman, Steve" is not confirmed by "Steve Gillman").
 */
export function seenIn(authors: Authors, text: string): boolean {
  const visible = letters(text);
  let end = -1;
  for (const name of authors.names.map(letters)) {
    const at = end < 0 ? visible.indexOf(name) : visible.indexOf(name, end);
    if (at < 0 || (end >= 0 && at - end > 40)) return false;
    end = at + name.length;
  }
  return end >= 0;
}
