/**
 * Word recall and precision of an extraction against a reference text (content-recall.ts). Words
 * are what Intl.Segmenter calls word-like, lower-cased, so Japanese pages count too; both texts are
 * bags of words: a word counts as many times as it appears in both.
 */

const segmenter = new Intl.Segmenter('und', { granularity: 'word' });

/** Markdown to the words a reader sees: no link targets, no images, no escapes. */
export function markdownText(markdown: string): string {
  return markdown
    .replace(/!\[[^\]]*\]\((?:[^()]|\([^()]*\))*\)/g, ' ')
    .replace(/\]\((?:[^()]|\([^()]*\))*\)/g, ']')
    .replace(/\\(.)/g, '$1');
}

export function wordsOf(text: string): string[] {
  const words: string[] = [];
  for (const segment of segmenter.segment(text.toLowerCase())) if (segment.isWordLike) words.push(segment.segment);
  return words;
}

function bag(words: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  return counts;
}

export interface Overlap {
  /** Share of the reference's words that the extraction has (1 when the reference is empty). */
  recall: number;
  /** Share of the extraction's words that are in the reference (0 when the extraction is empty: a miss, not a precise answer). */
  precision: number;
  referenceWords: number;
  extractedWords: number;
}

export function overlap(extracted: string[], reference: string[]): Overlap {
  const ours = bag(extracted);
  let shared = 0;
  for (const [word, count] of bag(reference)) shared += Math.min(count, ours.get(word) ?? 0);
  return {
    recall: reference.length ? shared / reference.length : 1,
    precision: extracted.length ? shared / extracted.length : 0,
    referenceWords: reference.length,
    extractedWords: extracted.length,
  };
}

/** Whether `words` holds `start` (the expected first words) as a run, ignoring punctuation and case. */
export function containsRun(words: string[], start: string[]): boolean {
  if (start.length === 0) return true;
  const haystack = ` ${words.join(' ')} `;
  return haystack.includes(` ${start.join(' ')} `);
}
