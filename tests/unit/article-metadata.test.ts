import { describe, expect, it } from 'vitest';
import { cleanByline, joinNames, seenIn, splitNames, visibleByline } from '../../server/src/capture/insight/article-authors.js';
import { dateContext, parseDate, readDate } from '../../server/src/capture/insight/article-dates.js';
import { articleMetadata } from '../../server/src/capture/insight/article-metadata.js';
import type { ArticleSignals } from '../../server/src/capture/insight/article-signals.js';
import { chooseTitle, withoutSiteName } from '../../server/src/capture/insight/article-title.js';
import { largestIconsFirst } from '../../server/src/capture/insight/page-metadata.js';

/** The pure rules of the article metadata (docs/page-insight.md, "Article metadata"); the page's part is in the integration test. */

function signals(overrides: Partial<ArticleSignals>): ArticleSignals {
  return {
    documentTitle: '',
    host: 'news.example',
    language: 'en',
    metas: [],
    jsonLd: [],
    itemprops: [],
    headerText: '',
    bylines: [],
    byTexts: [],
    times: [],
    headings: [],
    ...overrides,
  };
}

describe('dates', () => {
  it('reads ISO 8601 with and without a zone, a day, RFC 2822, Unix time and engine date strings as instants', () => {
    expect(parseDate('2016-09-19T11:46:01-04:00')).toBe('2016-09-19T15:46:01.000Z');
    expect(parseDate('2016-09-19T11:46:01.250+0200')).toBe('2016-09-19T09:46:01.250Z');
    expect(parseDate('2016-09-19 11:46:01')).toBe('2016-09-19T11:46:01.000Z');
    expect(parseDate('2016-09-19')).toBe('2016-09-19T00:00:00.000Z');
    expect(parseDate('20160919')).toBe('2016-09-19T00:00:00.000Z');
    expect(parseDate('Tue, 07 Apr 2020 07:36:07 +0530')).toBe('2020-04-07T02:06:07.000Z');
    expect(parseDate('1474285561')).toBe('2016-09-19T11:46:01.000Z');
    expect(parseDate('Mon Aug 03 12:45:00 EDT 2015')).toBe('2015-08-03T16:45:00.000Z');
    expect(parseDate('Tue Dec 20 2016 13:00:00 GMT+0000 (UTC)')).toBe('2016-12-20T13:00:00.000Z');
  });

  it('reads dates in words and digits, with US zones that follow daylight time', () => {
    expect(parseDate('September 19, 2016 11:46 AM EDT')).toBe('2016-09-19T15:46:00.000Z');
    expect(parseDate('Published: Dec. 22, 2016, 6:47 p.m.')).toBe('2016-12-22T18:47:00.000Z');
    expect(parseDate('By Lauren, December 16th 2016')).toBe('2016-12-16T00:00:00.000Z');
    // ET is EST in January and EDT in July.
    expect(parseDate('Jan 5, 2017 10:00 AM ET')).toBe('2017-01-05T15:00:00.000Z');
    expect(parseDate('Jul 5, 2017 10:00 AM ET')).toBe('2017-07-05T14:00:00.000Z');
    expect(parseDate('10/17/2022 04:01 PM EDT')).toBe('2022-10-17T20:01:00.000Z');
    expect(parseDate('Publié le 07 mai 2019 à 13h59')).toBe('2019-05-07T13:59:00.000Z');
    expect(parseDate('7 de mayo de 2019')).toBe('2019-05-07T00:00:00.000Z');
  });

  it("reads a time without zone in the page's zone when its language has one, and 03/04 by its language", () => {
    const japanese = dateContext('ja');
    expect(parseDate('2019年4月4日', japanese)).toBe('2019-04-03T15:00:00.000Z');
    expect(parseDate('2019年04月21日 12時00分更新', japanese)).toBe('2019-04-21T03:00:00.000Z');
    expect(parseDate('2019.03.08', japanese)).toBe('2019-03-07T15:00:00.000Z');
    // A zone written out wins over the language's.
    expect(parseDate('2019-04-13T16:08:44+09:00', dateContext('zh-CN'))).toBe('2019-04-13T07:08:44.000Z');
    expect(parseDate('03/04/2020', dateContext('en-GB'))).toBe('2020-04-03T00:00:00.000Z');
    expect(parseDate('03/04/2020', dateContext('en-US'))).toBe('2020-03-04T00:00:00.000Z');
    expect(parseDate('25/04/2020', dateContext('en-US'))).toBe('2020-04-25T00:00:00.000Z');
  });

  it('says how precise a date is, and reads no date in other text', () => {
    expect(readDate('2016-09-19T11:46:01Z')).toMatchObject({ precision: 2, day: '2016-09-19' });
    expect(readDate('2016-09-19T23:46:01-04:00')).toMatchObject({ precision: 2, day: '2016-09-19', iso: '2016-09-20T03:46:01.000Z' });
    expect(readDate('Sep 19, 2016 11:46')).toMatchObject({ precision: 1 });
    expect(readDate('Sep 19, 2016')).toMatchObject({ precision: 0 });
    for (const text of ['', '4 months ago', 'Timer List', '3:49', '1850-01-01', '2016-13-45', 'P3M,14S'])
      expect(parseDate(text), text).toBeNull();
  });
});

describe('bylines', () => {
  it('removes "By" and what a byline runs on into: dates, roles, places, read times, e-mail addresses', () => {
    expect(cleanByline('By Jane Doe')).toBe('Jane Doe');
    expect(cleanByline('ByJane Doe')).toBe('Jane Doe');
    expect(cleanByline('Byby JOSH HASKELL, DAVID CAPLAN and PATRICK REEVELL\nDecember 16, 2016, 4:19 PM')).toBe(
      'JOSH HASKELL, DAVID CAPLAN and PATRICK REEVELL',
    );
    expect(cleanByline('By\nTravis Haney')).toBe('Travis Haney');
    expect(cleanByline('By Lauren Jarvis-Gibson, December 16th 2016')).toBe('Lauren Jarvis-Gibson');
    expect(cleanByline('By T.C. Sottek Nov 29, 2016, 10:00am EST\n203 comments / new')).toBe('T.C. Sottek');
    expect(cleanByline('Written by Michael Larabel in Valve on 1 June 2019 at 08:34 PM EDT. 51 Comments')).toBe('Michael Larabel');
    expect(cleanByline('Wednesday January 18, 2017 10:44 am PST by Juli Clover')).toBe('Juli Clover');
    expect(cleanByline('Sam Stein Senior Politics Editor, The Huffington Post')).toBe('Sam Stein');
    expect(cleanByline('Howard Schneider, Lindsay Dunsmuir 5 Min Read')).toBe('Howard Schneider, Lindsay Dunsmuir');
    expect(cleanByline('Saibal Dasgupta / TNN / Updated: Oct 9, 2019')).toBe('Saibal Dasgupta');
    expect(cleanByline('Cécile Ducourtieux (Bruxelles, bureau européen)')).toBe('Cécile Ducourtieux');
    expect(cleanByline('Par Martin Untersinger')).toBe('Martin Untersinger');
    expect(cleanByline('Di Stefano Rossi')).toBe('Di Stefano Rossi');
  });

  it('finds no name in labels, links, handles and dates', () => {
    for (const text of ['By', 'Share', 'Follow', 'https://www.facebook.com/someone', '@handle', 'Dec 9, 2016', '', 'Read more'])
      expect(cleanByline(text), text).toBeNull();
  });

  it('joins and splits names as a byline reads', () => {
    expect(joinNames(['Ann Lee'])).toBe('Ann Lee');
    expect(joinNames(['Ann Lee', 'Bo Chan'])).toBe('Ann Lee and Bo Chan');
    expect(joinNames(['Ann Lee', 'Bo Chan', 'Cy Diaz'])).toBe('Ann Lee, Bo Chan and Cy Diaz');
    expect(splitNames('Marc Santora, William K. Rashbaum, Al Baker and Adam Goldman')).toEqual([
      'Marc Santora',
      'William K. Rashbaum',
      'Al Baker',
      'Adam Goldman',
    ]);
    expect(splitNames('Mac & i')).toEqual(['Mac & i']);
  });

  it('confirms declared names only when the page shows them in that order, close together', () => {
    const text = 'Headline\nBy Steve Gillman\nContributor';
    expect(seenIn({ byline: 'Steve Gillman', names: ['Steve Gillman'] }, text)).toBe(true);
    expect(seenIn({ byline: 'Gillman, Steve', names: ['Gillman', 'Steve'] }, text)).toBe(false);
    expect(seenIn({ byline: 'Ann Lee', names: ['Ann Lee'] }, text)).toBe(false);
  });

  it('takes the byline by the headline, skipping photo credits and social links, and joins one-name elements', () => {
    expect(
      visibleByline([
        { hint: 'span photo-credit author', text: 'Getty Images', near: true },
        { hint: 'a byline__social-handle twitter', text: 'Twitter', near: true },
        { hint: 'a author-link', text: 'Ann Lee', near: true },
        { hint: 'a author-link', text: 'Bo Chan', near: true },
        { hint: 'a author-link', text: 'Someone Else', near: false },
      ]),
    ).toEqual({ byline: 'Ann Lee and Bo Chan', names: ['Ann Lee', 'Bo Chan'] });
    expect(visibleByline([{ hint: 'a author-link', text: 'Kathy Wise', near: false }])).toEqual({
      byline: 'Kathy Wise',
      names: ['Kathy Wise'],
    });
  });
});

describe('article title', () => {
  const sites = ['fixturegazette', 'gazette'];
  it("removes the site's name before or after a separator, and nothing else", () => {
    expect(withoutSiteName('Tide tables | Fixture Gazette', sites)).toBe('Tide tables');
    expect(withoutSiteName('Fixture Gazette - Tide tables', sites)).toBe('Tide tables');
    expect(withoutSiteName('Tide tables — Coasts | Fixture Gazette', sites)).toBe('Tide tables — Coasts');
    expect(withoutSiteName('Box Office: It’s Good to Be ‘Peculiar’', sites)).toBe('Box Office: It’s Good to Be ‘Peculiar’');
    expect(withoutSiteName('Fixture Gazette', sites)).toBe('Fixture Gazette');
  });

  it('prefers the h1 the declared titles agree with, then an h1 in the article, then the declared title', () => {
    const h1 = (text: string, inArticle = true) => ({ text, inArticle, visible: true });
    expect(
      chooseTitle({
        headings: [h1('Fixture Gazette', false), h1('Tide tables, explained')],
        declared: ['Tide tables explained'],
        documentTitle: '',
        sites,
      }),
    ).toBe('Tide tables, explained');
    expect(chooseTitle({ headings: [h1('Why the sea rises')], declared: ['Tides: a social title'], documentTitle: '', sites })).toBe(
      'Why the sea rises',
    );
    expect(
      chooseTitle({ headings: [h1('Fixture Gazette', false)], declared: [], documentTitle: 'Tide tables | Fixture Gazette', sites }),
    ).toBe('Tide tables');
    expect(chooseTitle({ headings: [], declared: [], documentTitle: '', sites })).toBeNull();
  });
});

describe('articleMetadata', () => {
  const graph = JSON.stringify({
    '@context': 'https://schema.org',
    '@graph': [
      { '@type': 'WebSite', '@id': '#site', name: 'Fixture Gazette' },
      { '@type': 'Person', '@id': '#ann', name: 'Ann Lee' },
      {
        '@type': ['NewsArticle'],
        headline: 'Tide tables explained',
        author: [{ '@id': '#ann' }, { '@type': 'Person', name: 'Bo Chan' }, { '@type': 'Organization', name: 'Fixture Gazette' }],
        datePublished: '2021-03-04T09:30:00+01:00',
        dateModified: '2021-03-05',
        publisher: { '@type': 'Organization', name: 'Fixture Gazette' },
      },
    ],
  });

  it('reads JSON-LD @graph authors (references resolved, organizations left out) and dates', () => {
    const found = articleMetadata(
      signals({
        jsonLd: [graph],
        headerText: 'Tide tables explained\nBy Ann Lee and Bo Chan',
        headings: [{ text: 'Tide tables explained', inArticle: true, visible: true }],
      }),
    );
    expect(found).toEqual({
      articleTitle: 'Tide tables explained',
      author: 'Ann Lee and Bo Chan',
      authors: ['Ann Lee', 'Bo Chan'],
      publishedAt: '2021-03-04T08:30:00.000Z',
      modifiedAt: '2021-03-05T00:00:00.000Z',
    });
  });

  it('prefers the byline the reader sees to a declared author it does not name, and never takes the site for a person', () => {
    const found = articleMetadata(
      signals({
        metas: [
          ['og:site_name', 'Fixture Gazette'],
          ['author', 'Fixture Gazette'],
          ['article:published_time', '2020-02-03'],
        ],
        bylines: [{ hint: 'p byline', text: 'By Cy Diaz\n3 Feb 2020, 14:05 GMT', near: true }],
        times: [{ hint: 'time', datetime: '2020-02-03T14:05:00Z', text: '3 Feb 2020, 14:05 GMT', near: true }],
      }),
    );
    expect(found.author).toBe('Cy Diaz');
    // The declared day, made precise by the time the page shows for it.
    expect(found.publishedAt).toBe('2020-02-03T14:05:00.000Z');
  });

  it('reads names from profile links as the page writes them, and a "By" line under the headline', () => {
    const links = articleMetadata(
      signals({
        metas: [['article:author', 'https://news.example/profile/julia-carrie-wong,https://news.example/profile/sam-levin']],
        headerText: 'Headline\nJulia Carrie Wong and Sam Levin\nTue 29 Nov 2016',
      }),
    );
    expect(links.author).toBe('Julia Carrie Wong and Sam Levin');
    expect(articleMetadata(signals({ headerText: 'Headline\nBy Teresa Newsome\nDec. 2, 2016' })).author).toBe('Teresa Newsome');
    // A sentence that starts with "By" is not a byline.
    expect(articleMetadata(signals({ headerText: 'Headline\nBy then, the keepers had left.' })).author).toBeNull();
  });

  it("takes the page's own article over one nested in a list of others, wherever the list stands", () => {
    const list = JSON.stringify({
      '@type': 'ItemList',
      itemListElement: [{ '@type': 'ListItem', item: { '@type': 'NewsArticle', headline: 'Other story', author: 'Zed Roe' } }],
    });
    const own = JSON.stringify({ '@type': 'BlogPosting', headline: 'Own story', author: { '@type': 'Person', name: 'Ann Lee' } });
    const found = articleMetadata(signals({ jsonLd: [list, own], headerText: 'Own story\nAnn Lee' }));
    expect(found).toMatchObject({ articleTitle: 'Own story', author: 'Ann Lee' });
  });

  it('gives nulls for a page that declares nothing', () => {
    expect(articleMetadata(signals({}))).toEqual({ articleTitle: null, author: null, authors: [], publishedAt: null, modifiedAt: null });
  });
});

describe('icons', () => {
  it('lists icons largest first by declared size: any first, unsized last, page order among equals', () => {
    const icon = (href: string, sizes: string | null) => ({ rel: 'icon', href, sizes, type: null });
    const sorted = largestIconsFirst([
      icon('16', '16x16'),
      icon('none', null),
      icon('192', '192x192'),
      icon('multi', '32x32 512x512'),
      icon('svg', 'any'),
      icon('180', '180x180'),
      icon('other-16', '16x16'),
    ]);
    expect(sorted.map((i) => i.href)).toEqual(['svg', 'multi', '192', '180', '16', 'other-16', 'none']);
    expect(largestIconsFirst(Array.from({ length: 80 }, (_, n) => icon(String(n), `${n}x${n}`)))).toHaveLength(50);
  });
});
