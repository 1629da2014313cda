import {
  bylineInText,
  fromByline,
  fromNames,
  fromText,
  namesFromProfileLinks,
  seenIn,
  visibleByline,
  type Authors,
} from './article-authors.js';
import { dateContext, readDate, type ReadDate } from './article-dates.js';
import type { ArticleSignals } from './article-signals.js';
import { chooseTitle, letters } from './article-title.js';
import { articleNode, jsonLdNodes, resolveRef, textOf, typesOf, type JsonLdNode } from './json-ld.js';

/**
 * The article's own metadata, chosen from what the page declares and shows (docs/page-insight.md,
 * "Article metadata"). Pure: the page's part is article-signals.ts.
 */
export interface ArticleMetadata {
  articleTitle: string | null;
  author: string | null;
  authors: string[];
  publishedAt: string | null;
  modifiedAt: string | null;
}

export const NO_ARTICLE_METADATA: ArticleMetadata = { articleTitle: null, author: null, authors: [], publishedAt: null, modifiedAt: null };

interface Sources {
  signals: ArticleSignals;
  nodes: JsonLdNode[];
  article: JsonLdNode | null;
  /** The values of these meta keys, in the order of the keys (then of the page). */
  meta: (...keys: string[]) => string[];
  sites: string[];
}

export function articleMetadata(signals: ArticleSignals): ArticleMetadata {
  const nodes = jsonLdNodes(signals.jsonLd);
  const meta = (...keys: string[]) => keys.flatMap((key) => signals.metas.filter(([name]) => name === key).map(([, value]) => value));
  const partial = { signals, nodes, article: articleNode(nodes), meta };
  const sources: Sources = { ...partial, sites: siteNames(partial) };
  const authors = chooseAuthors(sources);
  return { articleTitle: title(sources), author: authors.byline, authors: authors.names, ...chooseDates(sources) };
}

/** The site's names as letters: og:site_name, app names, the Twitter account, the JSON-LD publisher, the host. */
function siteNames({ signals, nodes, meta }: Omit<Sources, 'sites'>): string[] {
  const publisher = nodes.map((node) => textOf((resolveRef(node.publisher, nodes) as JsonLdNode | undefined)?.name));
  const host = signals.host.replace(/^www\d?\./, '');
  return [
    ...meta('og:site_name', 'application-name', 'apple-mobile-web-app-title', 'al:iphone:app_name', 'twitter:app:name:iphone'),
    ...meta('twitter:site').map((handle) => handle.replace(/^@/, '')),
    ...publisher,
    host,
    host.split('.')[0],
  ]
    .map((name) => letters(name ?? ''))
    .filter((name) => name.length >= 2);
}

function title({ signals, article, meta, sites }: Sources): string | null {
  const declared = [
    ...meta('og:title'),
    textOf(article?.headline),
    ...meta('twitter:title', 'sailthru.title', 'parsely-title', 'headline', 'title', 'dc.title'),
    ...signals.itemprops.filter((item) => item.prop === 'headline').map((item) => item.value),
  ].filter((value): value is string => !!value);
  return chooseTitle({ headings: signals.headings, declared, documentTitle: signals.documentTitle, sites });
}

const PERSON_KEYS = [
  'byl',
  'article:author',
  'parsely-author',
  'sailthru.author',
  'cxenseparse:author',
  'author',
  'dc.creator',
  'dcterms.creator',
  'citation_author',
];
const ORGANIZATION = /Organization|Corporation|NewsMediaOrganization/;

/** The people a JSON-LD author value names: strings, Person objects, references, arrays of them. */
function jsonLdNames(value: unknown, nodes: JsonLdNode[], organizations: boolean): string[] {
  if (Array.isArray(value)) return value.flatMap((item) => jsonLdNames(item, nodes, organizations));
  const resolved = resolveRef(value, nodes);
  if (typeof resolved === 'string') return [resolved];
  if (!resolved || typeof resolved !== 'object') return [];
  const node = resolved as JsonLdNode;
  if (typesOf(node).some((type) => ORGANIZATION.test(type)) !== organizations) return [];
  const name = textOf(node.name) ?? [textOf(node.givenName), textOf(node.familyName)].filter(Boolean).join(' ');
  return name ? [name] : [];
}

function chooseAuthors({ signals, nodes, article, meta, sites }: Sources): Authors {
  // What the reader sees by the headline: the text there and the byline elements in its block.
  const shown = [signals.headerText, ...signals.bylines.filter((element) => element.near).map((element) => element.text)].join('\n');
  const people = article ? jsonLdNames(article.author ?? article.creator, nodes, false) : [];
  const isLink = (value: string) => /^(?:https?:|www\.)/i.test(value);
  const metaCandidates = PERSON_KEYS.map((key) => meta(key).filter((value) => !isLink(value))).map((values) =>
    values.length > 1 ? fromNames(values) : fromByline(values[0]),
  );
  const microdata = signals.itemprops.filter((item) => item.prop === 'author' || item.prop === 'creator');
  const nearMicrodata = microdata.filter((item) => item.near).map((item) => item.value);
  const declared = [
    fromNames(people),
    ...metaCandidates,
    nearMicrodata.length ? fromNames(nearMicrodata) : fromByline(microdata[0]?.value),
    namesFromProfileLinks(meta('article:author', 'author').filter(isLink), shown),
  ].filter((found): found is Authors => !!found);
  const near = visibleByline(signals.bylines.filter((element) => element.near));
  const elsewhere = visibleByline(signals.bylines);
  const organizations = article ? fromNames(jsonLdNames(article.author ?? article.publisher, nodes, true)) : null;
  return (
    // What the page declares, as long as the reader sees the same names by the headline.
    // The site's own name is on every page: it confirms nothing.
    declared.find((found) => seenIn(found, shown) && !sites.includes(letters(found.byline!))) ??
    near ??
    bylineInText(signals.headerText) ??
    declared[0] ??
    elsewhere ??
    fromText(signals.byTexts[0]) ??
    organizations ?? { byline: null, names: [] }
  );
}

const PUBLISHED_KEYS = [
  'article:published_time',
  'og:article:published_time',
  'article:published',
  'og:published_time',
  'published_time',
  'datepublished',
  'publishdate',
  'publish-date',
  'publish_date',
  'pubdate',
  'parsely-pub-date',
  'sailthru.date',
  'dc.date.issued',
  'dcterms.issued',
  'dc.date',
  'dcterms.date',
  'dc.date.created',
  'dcterms.created',
  'citation_publication_date',
  'citation_date',
  'created-date',
  'date',
  'article.published',
  'ptime',
  'article_date_original',
];
const MODIFIED_KEYS = [
  'article:modified_time',
  'og:article:modified_time',
  'article:modified',
  'og:updated_time',
  'article:updated_time',
  'modified_time',
  'datemodified',
  'last-modified',
  'modified-date',
  'dc.date.modified',
  'dcterms.modified',
  'mtime',
  'article_date_updated',
];

/**
 * The most precise of the candidates (a zoned time over a time without zone over a day), the first
 * of those in the order given: declared values first, then `<time>` and date elements by the headline.
 */
function mostPrecise(values: Array<string | null | undefined>, read: (value: string) => ReadDate | null): ReadDate | null {
  let best: ReadDate | null = null;
  for (const value of values) {
    const date = value ? read(value) : null;
    if (date && (!best || date.precision > best.precision)) best = date;
  }
  return best;
}

/** A day, or a time without zone, made precise by another text of the page that gives the same day more exactly. */
function refined(date: ReadDate | null, others: ReadDate[]): string | null {
  if (!date || date.precision === 2) return date?.iso ?? null;
  const better = others.filter((other) => other.day === date.day && other.precision > date.precision);
  return (better.find((other) => other.precision === 2) ?? better[0] ?? date).iso;
}

function chooseDates({ signals, article, meta }: Sources): Pick<ArticleMetadata, 'publishedAt' | 'modifiedAt'> {
  const context = dateContext(signals.language);
  const read = (value: string) => readDate(value, context);
  const itemprop = (...props: string[]) => signals.itemprops.filter((item) => props.includes(item.prop)).map((item) => item.value);
  const times = (hint: RegExp) =>
    signals.times.filter((time) => hint.test(time.hint) && (time.near || /publish|update|modif/.test(time.hint)));
  const texts = (list: ArticleSignals['times']) => list.flatMap((time) => [time.datetime, time.text]);
  // Every date the page shows, to make a declared day precise.
  const shown = texts(signals.times)
    .map((value) => (value ? read(value) : null))
    .filter((date): date is ReadDate => !!date);
  const published =
    mostPrecise(
      [
        textOf(article?.datePublished),
        ...meta(...PUBLISHED_KEYS),
        ...itemprop('datePublished'),
        textOf(article?.dateCreated),
        ...itemprop('dateCreated'),
        ...texts(times(/publish|pubdate|created|posted/)),
        // The first dates by the headline: further down they are the story's own.
        ...texts(signals.times.filter((time) => time.near && !/update|modif/.test(time.hint)).slice(0, 3)),
      ],
      read,
    ) ?? mostPrecise(texts(signals.times.filter((time) => /^time\b/.test(time.hint)).slice(0, 1)), read);
  const modified = mostPrecise(
    [textOf(article?.dateModified), ...meta(...MODIFIED_KEYS), ...itemprop('dateModified'), ...texts(times(/update|modif/))],
    read,
  );
  return { publishedAt: refined(published, shown), modifiedAt: refined(modified, shown) };
}
