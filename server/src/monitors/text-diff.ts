import { diffArrays } from 'diff';

/**
 * The change in words: the page's text (its markdown, page-text.ts) of two captures compared line
 * by line with jsdiff (https://github.com/kpdecker/jsdiff, Myers' diff on arrays of lines). Lines
 * are trimmed and blank ones dropped, so re-indented or re-spaced markdown is no change. A line
 * that moved is reported as removed where it was and added where it is, as a diff reads.
 */

export const TEXT_DIFF_LIMITS = {
  /** Lines listed in each of textAdded and textRemoved. */
  lines: 200,
  /** Characters kept of a listed line (longer ones end with …). */
  lineLength: 500,
  /** Lines of each text compared; the rest of a longer page is left out. */
  inputLines: 20_000,
  /** Past this, the line diff gives up and the lines are compared as two sets (any order). */
  diffTimeoutMs: 250,
} as const;

export interface TextDiff {
  textAdded: string[];
  textRemoved: string[];
}

const linesOf = (text: string) =>
  text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0)
    .slice(0, TEXT_DIFF_LIMITS.inputLines);

const listed = (lines: string[]) =>
  lines
    .slice(0, TEXT_DIFF_LIMITS.lines)
    .map((line) => (line.length > TEXT_DIFF_LIMITS.lineLength ? `${line.slice(0, TEXT_DIFF_LIMITS.lineLength - 1)}…` : line));

/** Lines one list has more often than the other, in its order: the answer when the line diff took too long. */
function unmatched(from: string[], against: string[]): string[] {
  const counts = new Map<string, number>();
  for (const line of against) counts.set(line, (counts.get(line) ?? 0) + 1);
  return from.filter((line) => {
    const left = counts.get(line) ?? 0;
    if (left > 0) counts.set(line, left - 1);
    return left === 0;
  });
}

/** Lines `after` has that `before` has not, and the other way round. */
export function diffText(before: string, after: string): TextDiff {
  const old = linesOf(before);
  const now = linesOf(after);
  const changes = diffArrays(old, now, { timeout: TEXT_DIFF_LIMITS.diffTimeoutMs });
  if (!changes) return { textAdded: listed(unmatched(now, old)), textRemoved: listed(unmatched(old, now)) };
  const textAdded: string[] = [];
  const textRemoved: string[] = [];
  for (const change of changes) {
    if (change.added) textAdded.push(...change.value);
    else if (change.removed) textRemoved.push(...change.value);
  }
  return { textAdded: listed(textAdded), textRemoved: listed(textRemoved) };
}
