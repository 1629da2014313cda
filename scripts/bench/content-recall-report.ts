/** The figures of content-recall.ts: per page, and summed up per way of extracting. */
import { containsRun, markdownText, overlap, wordsOf, type Overlap } from './word-overlap.js';

export interface PageScore extends Overlap {
  file: string;
  /** Whether the test's hand-written first words of the article are in the Markdown (null: none written). */
  startFound: boolean | null;
  /** The extractor whose article the Markdown holds, when known. */
  extractor?: string;
  firstVerdict?: string | null;
  ms?: number;
}

export function scorePage(file: string, markdown: string, reference: string, expectedStart: string | null): PageScore {
  const words = wordsOf(markdownText(markdown));
  return {
    file,
    ...overlap(words, wordsOf(reference)),
    // Mercury's first-words helper cuts at 13 spaced words; a run of them must appear in order.
    startFound: expectedStart === null ? null : containsRun(words, wordsOf(expectedStart)),
  };
}

export interface Summary {
  name: string;
  pages: number;
  meanRecall: number;
  meanPrecision: number;
  medianRecall: number;
  medianPrecision: number;
  /** Pages where less than half the reference's words are in the Markdown: the article was missed. */
  missed: number;
  startFound: string;
  /** Pages whose Markdown is not Readability's article. */
  fallbacks: number | null;
  /** Median and largest time to choose and convert (in-process variants only). */
  msMedian: number | null;
  msMax: number | null;
}

const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN);
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)]! : NaN;
};

export function summarize(name: string, scores: PageScore[]): Summary {
  const withStart = scores.filter((score) => score.startFound !== null);
  const times = scores.flatMap((score) => (score.ms === undefined ? [] : [score.ms]));
  const known = scores.filter((score) => score.extractor !== undefined);
  return {
    name,
    pages: scores.length,
    meanRecall: mean(scores.map((s) => s.recall)),
    meanPrecision: mean(scores.map((s) => s.precision)),
    medianRecall: median(scores.map((s) => s.recall)),
    medianPrecision: median(scores.map((s) => s.precision)),
    missed: scores.filter((s) => s.recall < 0.5).length,
    startFound: `${withStart.filter((s) => s.startFound).length}/${withStart.length}`,
    fallbacks: known.length ? known.filter((s) => s.extractor !== 'readability').length : null,
    msMedian: times.length ? median(times) : null,
    msMax: times.length ? Math.max(...times) : null,
  };
}

const fixed = (value: number, digits = 3) => (Number.isFinite(value) ? value.toFixed(digits) : '–');

export function summaryTable(summaries: Summary[]): string {
  const rows = summaries.map(
    (s) =>
      `| ${s.name} | ${s.pages} | ${fixed(s.meanRecall)} | ${fixed(s.meanPrecision)} | ${fixed(s.medianRecall)} | ${fixed(s.medianPrecision)} | ${s.missed} | ${s.startFound} | ${s.fallbacks ?? '–'} | ${s.msMedian === null ? '–' : fixed(s.msMedian, 0)} / ${s.msMax === null ? '–' : fixed(s.msMax, 0)} |`,
  );
  return [
    '| extraction | pages | mean recall | mean precision | median recall | median precision | recall < 0.5 | first words found | not Readability | ms median / max |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** Pages where two ways of extracting differ by more than 0.05 in recall or precision. */
export function differences(before: PageScore[], after: PageScore[]): string {
  const byFile = new Map(before.map((score) => [score.file, score]));
  const lines: string[] = [];
  for (const score of after) {
    const old = byFile.get(score.file);
    if (!old || (Math.abs(old.recall - score.recall) <= 0.05 && Math.abs(old.precision - score.precision) <= 0.05)) continue;
    lines.push(
      `| ${score.file} | ${score.referenceWords} | ${fixed(old.recall, 2)} → ${fixed(score.recall, 2)} | ${fixed(old.precision, 2)} → ${fixed(score.precision, 2)} | ${old.extractedWords} → ${score.extractedWords} | ${score.firstVerdict ?? ''} | ${score.extractor ?? ''} |`,
    );
  }
  if (!lines.length) return 'No page changed by more than 0.05.';
  return [
    '| page | reference words | recall | precision | words | verdict on Readability | chosen |',
    '|---|---|---|---|---|---|---|',
    ...lines,
  ].join('\n');
}
