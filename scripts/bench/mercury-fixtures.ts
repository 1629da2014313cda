/**
 * The saved pages of the Mercury parser's repository (postlight/parser, MIT/Apache-2.0), read from a
 * local checkout with git, never copied into this repository: each `fixtures/*.html` with the URL
 * its test parses it as (so Mercury picks the site's hand-written extractor) and the first words
 * of the article its test expects. Used by content-recall.ts.
 */
import { execFileSync } from 'node:child_process';

export interface MercuryFixture {
  /** File name under fixtures/, e.g. `www.nytimes.com.html`. */
  file: string;
  /** The URL the page was saved from (as the fixture's test parses it). */
  url: string;
  /** The page as saved (bytes: a few are Shift_JIS or EUC-JP). */
  html: Buffer;
  /** The text those bytes hold, decoded with the page's declared charset. */
  text: string;
  /** The first words of the article the test expects (hand-written), when the test says. */
  expectedStart: string | null;
}

const git = (repo: string, args: string[]) => execFileSync('git', ['-C', repo, ...args], { maxBuffer: 256 << 20 });

/** The repository's file at HEAD (works on a bare mirror as on a checkout). */
export const showFile = (repo: string, path: string): Buffer => git(repo, ['show', `HEAD:${path}`]);

/** Decodes saved bytes with the charset their `<meta>` declares (UTF-8 when none or unknown). */
export function decodePage(bytes: Buffer): string {
  const head = bytes.subarray(0, 4096).toString('latin1');
  const charset = /<meta[^>]+charset=["']?([\w-]+)/i.exec(head)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** A JavaScript string literal ('…', "…" or `…`) at the start of `source`, unescaped. */
function stringLiteral(source: string): string | null {
  const match = /^\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/s.exec(source);
  if (!match) return null;
  return match[2]!.replace(/\\(u[0-9a-fA-F]{4}|.)/gs, (_, escaped: string) =>
    escaped.length === 5 ? String.fromCharCode(parseInt(escaped.slice(1), 16)) : escaped === 'n' ? '\n' : escaped,
  );
}

/**
 * Reads a custom extractor's test: each `fixtures/X.html` it loads, the URL assigned before it and
 * the first `assert.equal(first13, …)`-style expectation after it (before the next fixture).
 */
function readTest(source: string): Array<{ file: string; url: string; expectedStart: string | null }> {
  const found: Array<{ file: string; url: string; expectedStart: string | null }> = [];
  const loads = [...source.matchAll(/readFileSync\(\s*['"]\.\/fixtures\/([^'"]+\.html)['"]/g)];
  loads.forEach((load, index) => {
    const before = source.slice(0, load.index);
    const urls = [...before.matchAll(/\burl\s*=\s*/g)];
    const last = urls[urls.length - 1];
    const url = last ? stringLiteral(before.slice(last.index! + last[0].length)) : null;
    if (!url || !/^https?:\/\//.test(url)) return;
    const after = source.slice(load.index, loads[index + 1]?.index ?? source.length);
    const expectation = /assert\.equal\(\s*first\d+\s*,/.exec(after);
    const expectedStart = expectation ? stringLiteral(after.slice(expectation.index + expectation[0].length)) : null;
    found.push({ file: load[1]!, url, expectedStart });
  });
  return found;
}

/** Every fixture some custom extractor's test parses with a URL, first mention wins. */
export function listMercuryFixtures(repo: string): MercuryFixture[] {
  const tests = git(repo, ['ls-tree', '-r', '--name-only', 'HEAD', 'src/extractors/custom'])
    .toString('utf8')
    .split('\n')
    .filter((path) => path.endsWith('.test.js'));
  const byFile = new Map<string, { url: string; expectedStart: string | null }>();
  for (const test of tests) {
    for (const entry of readTest(showFile(repo, test).toString('utf8'))) {
      if (!byFile.has(entry.file)) byFile.set(entry.file, entry);
    }
  }
  return [...byFile.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([file, { url, expectedStart }]) => {
      const html = showFile(repo, `fixtures/${file}`);
      return { file, url, html, text: decodePage(html), expectedStart };
    });
}
