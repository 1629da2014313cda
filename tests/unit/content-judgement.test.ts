import { readFileSync } from 'node:fs';
import { parseHTML } from 'linkedom';
import { describe, expect, it } from 'vitest';
import {
  countWords,
  findMainElement,
  judge,
  linkDensity,
  mainStats,
  proseWords,
  textStats,
} from '../../server/src/capture/output/content-judgement.js';
import { defuddleExtraction, landmarkExtraction } from '../../server/src/capture/output/content-extractors.js';
import { chooseExtraction, htmlToMarkdown } from '../../server/src/capture/output/html-to-markdown.js';

/**
 * How format=markdown judges Readability's article and falls back (docs/page-insight.md, "How the
 * article is chosen"), on the synthetic pages of tests/fixtures/pages/content-fallback.
 */

const FIXTURES = new URL('../fixtures/pages/content-fallback/', import.meta.url).pathname;
const fixture = (name: string) => readFileSync(`${FIXTURES}${name}.html`, 'utf8');
const documentOf = (html: string) => parseHTML(html).document as unknown as Document;

describe('content judgement', () => {
  it('counts words in spaced and unspaced scripts, and the words inside links', () => {
    expect(countWords('The lamp, the weather — and 3 ships.')).toBe(7);
    // Japanese has no spaces: the segmenter's dictionary splits it into several words.
    expect(countWords('東京都の天気は晴れです')).toBeGreaterThan(3);
    const document = documentOf(
      '<html><body><p>Read <a href="/a">the whole story</a> now</p><script>var hidden = "not words at all"</script><a>no href</a></body></html>',
    );
    const stats = textStats(document.body);
    expect(stats).toEqual({ words: 7, linkWords: 3 });
    expect(linkDensity(stats)).toBeCloseTo(3 / 7);
    expect(proseWords(stats)).toBe(4);
  });

  it('finds the main landmark, leaving out its navigation, comments and teasers', () => {
    const document = documentOf(`<body><nav><p>${'menu words '.repeat(50)}</p></nav>
      <main><p>${'story words '.repeat(20)}</p><nav><a href="/x">Prev</a></nav>
      <section id="comments"><p>${'comment words '.repeat(100)}</p></section></main></body>`);
    const main = findMainElement(document);
    expect(main?.tagName).toBe('MAIN');
    expect(mainStats(main!)).toEqual({ words: 40, linkWords: 0 });
  });

  it('takes the largest text block on a page without landmarks', () => {
    const document = documentOf(`<body><div id="menu"><p><a href="/1">${'link words '.repeat(40)}</a></p></div>
      <div id="story"><p>${'story words '.repeat(30)}</p><p>${'more words '.repeat(30)}</p></div>
      <div id="aside"><p>${'short words '.repeat(10)}</p></div></body>`);
    expect(findMainElement(document)?.getAttribute('id')).toBe('story');
  });

  it('judges an extraction mostly links, much shorter than the main text, or right', () => {
    const main = { words: 400, linkWords: 20 };
    expect(judge({ words: 0, linkWords: 0 }, main)).toBe('empty');
    expect(judge({ words: 417, linkWords: 380 }, main)).toBe('mostly-links');
    expect(judge({ words: 100, linkWords: 10 }, main)).toBe('much-shorter');
    expect(judge({ words: 300, linkWords: 10 }, main)).toBeNull();
  });
});

describe('choosing the article', () => {
  const article = 'The harbour pilots of the northern port voted on Tuesday to strike from next Monday';
  const second = 'Ships waiting to enter the port will be held at anchor';

  it('falls back when Readability takes a scoreboard of links for the article', () => {
    const html = fixture('score-menu');
    // Readability alone (the code before the fallbacks): the scores, not the article.
    const before = htmlToMarkdown(html, { fallbacks: [] });
    expect(before.extractor).toBe('readability');
    expect(before.markdown).toContain('[Lakers at Spurs, final]');
    expect(before.markdown).not.toContain(article);

    const after = htmlToMarkdown(html, { url: 'http://127.0.0.1/news/pilots' });
    expect(after.firstVerdict).toBe('mostly-links');
    expect(after.extractor).toBe('defuddle');
    expect(after.markdown.startsWith('# Harbour pilots vote to strike\n')).toBe(true);
    expect(after.markdown).toContain(article);
    expect(after.markdown).toContain(second);
    expect(after.markdown).not.toContain('Lakers');
  });

  it('falls back to the main landmark when it is the only candidate that looks right', () => {
    const choice = chooseExtraction(fixture('score-menu'), { fallbacks: ['landmark'] });
    expect(choice.chosen?.extractor).toBe('landmark');
    expect(choice.chosen?.title).toBe('Harbour pilots vote to strike');
    expect(choice.chosen?.html).toContain(article);
    expect(choice.chosen?.html).not.toContain('Lakers');
  });

  it("keeps Readability's short article when Defuddle finds it short too (teasers beside it)", () => {
    const html = fixture('teasers');
    const landmarkOnly = chooseExtraction(html, { fallbacks: ['landmark'] });
    expect(landmarkOnly.firstVerdict).toBe('much-shorter');
    expect(landmarkOnly.chosen?.extractor).toBe('landmark');
    expect(landmarkOnly.chosen?.html).toContain('Another story number 7');

    const shipped = htmlToMarkdown(html);
    expect(shipped.firstVerdict).toBe('much-shorter');
    expect(shipped.extractor).toBe('readability');
    expect(shipped.markdown).toContain('Entry 8 of the keeper');
    expect(shipped.markdown).not.toContain('Another story');
  });

  it('never fetches: Defuddle reads the document alone, also with a URL its site extractors know', () => {
    const before = globalThis.fetch;
    let calls = 0;
    globalThis.fetch = (() => {
      calls += 1;
      return Promise.reject(new Error('no network in this test'));
    }) as typeof fetch;
    try {
      const html = `<html><head><title>Video</title></head><body><main><p>${'A description of the video. '.repeat(10)}</p></main></body></html>`;
      // Site extractors that fetch transcripts or comments when allowed (Defuddle's useAsync).
      defuddleExtraction(html, 'https://www.youtube.com/watch?v=abc');
      defuddleExtraction(html, 'https://www.reddit.com/r/a/comments/b/c/');
      expect(defuddleExtraction(html, 'https://example.org/video')?.html).toContain('A description of the video.');
    } finally {
      globalThis.fetch = before;
    }
    expect(calls).toBe(0);
  });

  it('gives no landmark for a page without text', () => {
    expect(landmarkExtraction('<html><body><main></main></body></html>')).toBeNull();
  });
});
