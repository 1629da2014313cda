/**
 * The limits of a JSON request body, for the API's routes (http/json-body.ts) and for /mcp, which
 * reads its own body (mcp/http-guards.ts).
 */

/** Largest JSON body (POST /capture, POST /captures): an inline html of 100 000 characters fits many times over. */
export const JSON_BODY_LIMIT = '1mb';
/** Deepest nesting of arrays and objects in a JSON body: the contract's bodies are three levels deep at most. */
export const MAX_JSON_DEPTH = 32;

const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The deepest nesting of arrays and objects in raw JSON bytes, scanning no further than `limit`:
 * one pass, no recursion, before JSON.parse or anything else walks the body (docs/containment.md:
 * 100 000 nested arrays overflowed the stack of a recursive walk and Express answered with its HTML
 * 500). Brackets inside strings do not count. UTF-8 never has these ASCII bytes inside a longer
 * character.
 */
export function jsonDepth(bytes: Uint8Array, limit = Infinity): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) depth--;
  }
  return deepest;
}
