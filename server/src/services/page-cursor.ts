/**
 * The opaque cursor of a page read newest first by (time, id): the last row's time and id in
 * base64url. The request log and a monitor's runs page the same way.
 */
export function encodePageCursor(at: number, id: string): string {
  return Buffer.from(`${at}:${id}`).toString('base64url');
}

/** The row a cursor names, or undefined when it is not one of ours (`id` says what an id looks like). */
export function decodePageCursor(cursor: string, id: RegExp): { at: number; id: string } | undefined {
  const match = new RegExp(`^(\\d{1,16}):(${id.source})$`, id.flags).exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match ? { at: Number(match[1]), id: match[2]! } : undefined;
}
