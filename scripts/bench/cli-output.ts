/** What the `daguerre` CLI prints (service.ts runs it to create the bench's organization and key), read without I/O. */

/** The first string property `name` found in a JSON value, depth first. */
export function findString(value: unknown, name: string, depth = 0): string | undefined {
  if (depth > 5 || value === null || typeof value !== 'object') return undefined;
  const record = value as Record<string, unknown>;
  const direct = record[name];
  if (typeof direct === 'string' || typeof direct === 'number') return String(direct);
  for (const v of Object.values(record)) {
    const found = findString(v, name, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The command's JSON: the whole output, or else its last line that parses (log lines may surround it). */
export function parseJsonOutput(stdout: string): unknown {
  const trimmed = stdout.trim();
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    // Maybe log lines around it: take the last line that parses.
    const lines = trimmed.split('\n').reverse();
    for (const line of lines) {
      try {
        return JSON.parse(line) as unknown;
      } catch {
        // next line
      }
    }
  }
  throw new Error(`no JSON in output: ${trimmed.slice(0, 500)}`);
}
