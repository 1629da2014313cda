import { z } from 'zod';
import { BLOCKED_HEADER_NAMES, LIMITS } from './limits.js';

/** RFC 9110 token: the characters allowed in a header name. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Visible ASCII, space, tab and obs-text; no CR, LF or other control characters. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

const NOT_AN_OBJECT = 'headers must be a URL-encoded JSON object of header names to string values, e.g. {"Accept-Language":"de-DE"}';

function parseJsonObject(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return Symbol.for('invalid-json');
  }
}

/**
 * `headers`: custom HTTP headers for the target, as a JSON object. At most 20; the blocked names
 * (docs/using-the-api.md, "Limits") and any control character (header injection) are refused.
 */
export const customHeadersParam = z
  .preprocess(
    parseJsonObject,
    z
      .record(z.string({ errorMap: () => ({ message: 'headers values must be strings' }) }), {
        errorMap: () => ({ message: NOT_AN_OBJECT }),
      })
      .superRefine((headers, ctx) => {
        const names = Object.keys(headers);
        if (names.length > LIMITS.maxCustomHeaders) {
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            message: `headers accepts at most ${LIMITS.maxCustomHeaders} headers, got ${names.length}`,
          });
        }
        for (const name of names) {
          const value = headers[name] ?? '';
          if (!HEADER_NAME.test(name)) {
            ctx.addIssue({
              code: z.ZodIssueCode.custom,
              message: `headers: "${name}" is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only)`,
            });
          } else if ((BLOCKED_HEADER_NAMES as readonly string[]).includes(name.toLowerCase())) {
            ctx.addIssue({
              code: z.ZodIssueCode.custom,
              message: `headers: "${name}" may not be set; blocked names are ${BLOCKED_HEADER_NAMES.join(', ')}`,
            });
          }
          if (!HEADER_VALUE.test(value)) {
            ctx.addIssue({
              code: z.ZodIssueCode.custom,
              message: `headers: the value of "${name}" contains a control character (CR, LF or similar)`,
            });
          } else if (value.length > LIMITS.headerValueMaxLength) {
            ctx.addIssue({
              code: z.ZodIssueCode.custom,
              message: `headers: the value of "${name}" is longer than ${LIMITS.headerValueMaxLength} characters`,
            });
          }
        }
      }),
  )
  .optional()
  .describe(
    `Custom HTTP headers sent to the target, as a URL-encoded JSON object (a JSON object in a POST body), e.g. {"Accept-Language":"de-DE"}; at most ${LIMITS.maxCustomHeaders}. ` +
      `Blocked names: Host, Content-Length, Transfer-Encoding, Connection, Upgrade, Keep-Alive, TE, Trailer, Proxy-Authorization, Proxy-Connection. Never stored.`,
  );
