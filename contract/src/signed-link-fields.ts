import { z } from 'zod';

/**
 * A signed link's parameters (GET only): they authenticate the request in place of `apiKey`, are
 * checked before validation and never reach the capture options, the cache key or the ledger.
 */
export const signedLinkFields = {
  keyId: z
    .string()
    .max(64, 'keyId must be at most 64 characters')
    .optional()
    .describe('Signed links: the id of the API key whose signing secret signed the link (instead of apiKey).'),
  expires: z
    .string()
    .regex(/^\d{1,12}$/, 'expires must be whole unix seconds')
    .optional()
    .describe('Signed links: unix time in seconds after which the link is refused (SIGNED_LINK_EXPIRED). Optional.'),
  signature: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'signature must be 64 lowercase hex characters')
    .optional()
    .describe(
      'Signed links: the last parameter; lowercase hex HMAC-SHA256, keyed with the signing secret, of the query string as sent before &signature=.',
    ),
};
export const SIGNED_LINK_FIELDS = ['keyId', 'expires', 'signature'] as const;
