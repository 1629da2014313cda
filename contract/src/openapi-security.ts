import { routesOf } from './route-policy.js';
import { contract } from './router.js';

/**
 * How each operation authenticates, as OpenAPI security: the schemes, and each operation's
 * requirement read from its route's RoutePolicy (the same declaration the server enforces).
 *
 * A signed link (keyId, optional expires, signature last) replaces the key on GET /capture only.
 * OpenAPI's apiKey scheme names one parameter, so the scheme names `signature`, the one a signed
 * link always carries; without it a validating proxy refuses a valid link ("Invalid security scheme").
 */
export const SECURITY_SCHEMES = {
  apiKeyQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'apiKey',
    description: 'The API key as query parameter apiKey (the primary form).',
  },
  apiKeyHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'The API key as header X-API-Key (what the SDK sends; keeps the key out of URLs).',
  },
  signedLink: {
    type: 'apiKey',
    in: 'query',
    name: 'signature',
    description:
      'A signed link, GET /capture only: the capture parameters, then keyId (the API key id) and optionally expires (unix seconds), then signature last: lowercase hex HMAC-SHA256, keyed with the key\'s signing secret, of the query string exactly as sent before "&signature=". The link carries no key. See docs/signed-links.md.',
  },
} as const;

export type SecuritySchemeName = keyof typeof SECURITY_SCHEMES;

const KEY_ONLY: readonly SecuritySchemeName[] = ['apiKeyQuery', 'apiKeyHeader'];

/**
 * The security requirement of an operation: any one of the schemes listed, as its route's
 * RoutePolicy declares its authentication (route-policy.ts); none for an open route.
 */
export function securityOf(operationId: string): Array<Record<string, string[]>> {
  const auth = routesOf(contract).find(({ name }) => name === operationId)?.route.metadata.auth;
  if (auth === 'none') return [];
  const schemes = auth === 'key-or-signed-link' ? [...KEY_ONLY, 'signedLink' as const] : KEY_ONLY;
  return schemes.map((name) => ({ [name]: [] }));
}
