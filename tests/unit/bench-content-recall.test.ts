import { describe, expect, it } from 'vitest';
import { differences, scorePage, summarize, summaryTable, type PageScore } from '../../scripts/bench/content-recall-report.js';
import { containsRun, markdownText, overlap, wordsOf } from '../../scripts/bench/word-overlap.js';

/** The content bench's scoring (scripts/bench/word-overlap.ts, content-recall-report.ts). */
describe('bench word overlap', () => {
  it('keeps the words a reader sees of Markdown: link texts, not targets; no images; no escapes', () => {
    expect(markdownText('See [the docs](https://x.example/a_(b)) and ![a chart](chart.png) \\*now\\*')).toBe('See [the docs] and   *now*');
  });

  it('splits words as Intl.Segmenter does, lower-cased, Japanese included', () => {
    expect(wordsOf('Hello, World! hello — 3 cats.')).toEqual(['hello', 'world', 'hello', '3', 'cats']);
    expect(wordsOf('東京都に住む').length).toBeGreaterThan(1);
  });

  it('counts a word as many times as it is in both bags', () => {
    expect(overlap(['a', 'a', 'b', 'c'], ['a', 'b', 'b', 'd'])).toEqual({
      recall: 0.5,
      precision: 0.5,
      referenceWords: 4,
      extractedWords: 4,
    });
    expect(overlap(['a', 'b'], ['a', 'b', 'c', 'd'])).toEqual({ recall: 0.5, precision: 1, referenceWords: 4, extractedWords: 2 });
    // An empty reference is fully recalled; an empty extraction is a miss, not a precise answer.
    expect(overlap([], [])).toEqual({ recall: 1, precision: 0, referenceWords: 0, extractedWords: 0 });
  });

  it('finds the expected first words as a run of whole words', () => {
    expect(containsRun(['the', 'quick', 'brown', 'fox'], ['quick', 'brown'])).toBe(true);
    expect(containsRun(['the', 'quick', 'brown', 'fox'], ['brown', 'quick'])).toBe(false);
    expect(containsRun(['the', 'quickly', 'brown'], ['quick'])).toBe(false);
    expect(containsRun(['anything'], [])).toBe(true);
  });
});

describe('bench content recall report', () => {
  it('scores a page against its reference and its first words', () => {
    expect(
      scorePage('a.html', '# Title\n\nThe quick [brown](https://x.example/) fox', 'The quick brown fox jumps', 'The quick, brown'),
    ).toEqual({
      file: 'a.html',
      recall: 0.8,
      precision: 0.8,
      referenceWords: 5,
      extractedWords: 5,
      startFound: true,
    });
    expect(scorePage('b.html', 'nothing here', 'the article', null).startFound).toBeNull();
    expect(scorePage('c.html', 'the end first', 'x', 'first the').startFound).toBe(false);
  });

  const score = (file: string, recall: number, precision: number, extra: Partial<PageScore> = {}): PageScore => ({
    file,
    recall,
    precision,
    referenceWords: 100,
    extractedWords: 90,
    startFound: null,
    ...extra,
  });
  const scores = [
    score('a', 0.2, 1, { startFound: true, extractor: 'readability', ms: 10 }),
    score('b', 0.9, 0.5, { extractor: 'fallback' }),
    score('c', 0.6, 0.7, { startFound: false, ms: 30 }),
  ];

  it('sums the pages up: means, medians, misses, first words, fallbacks, times', () => {
    const summary = summarize('service', scores);
    expect(summary).toEqual({
      name: 'service',
      pages: 3,
      meanRecall: expect.closeTo(1.7 / 3, 10),
      meanPrecision: expect.closeTo(2.2 / 3, 10),
      medianRecall: 0.6,
      medianPrecision: 0.7,
      missed: 1,
      startFound: '1/2',
      fallbacks: 1,
      // Of an even count, the upper of the two middle values.
      msMedian: 30,
      msMax: 30,
    });
    expect(summarize('none', [score('a', 1, 1)])).toMatchObject({ fallbacks: null, msMedian: null, msMax: null, startFound: '0/0' });
  });

  it('prints the summary table, with a dash for what is unknown', () => {
    const table = summaryTable([summarize('service', scores), summarize('empty', [])]).split('\n');
    expect(table).toHaveLength(4);
    expect(table[0]).toMatch(/^\| extraction \| pages \| mean recall /);
    expect(table[2]).toBe('| service | 3 | 0.567 | 0.733 | 0.600 | 0.700 | 1 | 1/2 | 1 | 30 / 30 |');
    expect(table[3]).toBe('| empty | 0 | – | – | – | – | 0 | 0/0 | – | – / – |');
  });

  it('lists the pages that moved by more than 0.05, and says so when none did', () => {
    const before = [score('a', 0.5, 0.5), score('b', 0.5, 0.5), score('c', 0.5, 0.5)];
    const after = [
      score('a', 0.54, 0.46),
      score('b', 0.8, 0.5, { extractedWords: 120, firstVerdict: 'too short', extractor: 'fallback' }),
      score('c', 0.5, 0.3),
      score('new', 1, 1),
    ];
    expect(differences(before, after).split('\n').slice(2)).toEqual([
      '| b | 100 | 0.50 → 0.80 | 0.50 → 0.50 | 90 → 120 | too short | fallback |',
      '| c | 100 | 0.50 → 0.50 | 0.50 → 0.30 | 90 → 90 |  |  |',
    ]);
    expect(differences(before, before)).toBe('No page changed by more than 0.05.');
  });
});
