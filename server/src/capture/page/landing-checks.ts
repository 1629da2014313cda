import type { CaptureOptions } from '@daguerre/contract';
import { refusedDestinationWords } from '../../security/destination-check.js';
import { REFUSED_HEADER } from '../../security/egress-proxy.js';
import { CaptureError } from '../capture-error.js';
import { assertTargetStatus } from './fail-conditions.js';
import type { Landing } from './navigation.js';
import { unreachable } from './navigation.js';
import type { NavigationWatch } from '../pool/navigation-watch.js';
import { withoutCredentials } from './page-report.js';

/**
 * Whether the egress proxy just refused the host of a URL (runtime.ts): an HTTPS navigation refused
 * by the proxy only shows as a failed tunnel, which this tells apart from a site that is down.
 */
export type WasRefused = (url: string) => boolean;
/** Why the egress proxy's connection to the host of a URL failed, as Chromium names it (it only sees a failed SOCKS connection). */
export type ConnectionFailure = (url: string) => string | undefined;

/** What the egress proxy knows about a destination. */
export interface EgressFacts {
  wasRefused?: WasRefused;
  connectionFailure?: ConnectionFailure;
}

export const proxyCredentialsRefused = () =>
  new CaptureError(
    'proxy-refused',
    'The proxy of proxyUrl refused the credentials (HTTP 407 Proxy Authentication Required): check proxyUsername and proxyPassword. Nothing was charged.',
  );

/** A destination the egress proxy refused (a redirect to a refused address, say), worded as the check before any work words it. */
const destinationRefused = () => {
  const { message, details } = refusedDestinationWords('url');
  return new CaptureError('destination-refused', message, { details });
};

const NET_ERROR = /net::ERR_[A-Z_]+/;

/** The answer for a navigation that failed with a network error (the first one, or one followed after load). */
export function navigationFailure(error: unknown, options: CaptureOptions, watch: NavigationWatch, egress: EgressFacts): unknown {
  if (!(error instanceof Error)) return error;
  // Through the egress chain a refused 407 ends the navigation with this network error.
  if (options.proxyUrl && /net::ERR_(INVALID_AUTH_CREDENTIALS|PROXY_AUTH_)/.test(error.message)) return proxyCredentialsRefused();
  const net = NET_ERROR.exec(error.message)?.[0];
  if (!net || net === 'net::ERR_ABORTED') return error;
  return refusedOrUnreachable(watch.failure?.url ?? watch.requestedUrl, net, egress);
}

/**
 * Through the egress proxy a refused or unreachable destination is a failed SOCKS connection (or,
 * through a caller's proxy, a failed tunnel): the proxy knows which. Otherwise the target did not answer.
 */
function refusedOrUnreachable(url: string | undefined, errorText: string, egress: EgressFacts): CaptureError {
  const throughProxy = /net::ERR_(TUNNEL_CONNECTION_FAILED|SOCKS_)/.test(errorText);
  if (throughProxy && url && egress.wasRefused?.(url)) return destinationRefused();
  const real = throughProxy && url ? egress.connectionFailure?.(url) : undefined;
  return unreachable(url ? withoutCredentials(url) : undefined, real ?? errorText);
}

/**
 * Checks the page the browser ended on: never a browser error page sold as a capture, the egress
 * proxy's own answers (a refused destination, an unreachable one), a refused proxy login, and
 * failOnHttpError.
 */
export function assertLanded(landing: Landing, options: CaptureOptions, watch: NavigationWatch, egress: EgressFacts): void {
  if (watch.onErrorPage()) {
    throw refusedOrUnreachable(watch.failure?.url ?? watch.requestedUrl, watch.failure?.errorText ?? 'net::ERR_FAILED', egress);
  }
  const { response } = landing;
  // The egress proxy marks the answers it gives itself: a refused destination (a redirect to a
  // refused address, say) is the caller's 400; any other mark means the target was not reached.
  const mark = response?.headers()[REFUSED_HEADER];
  if (mark === 'refused') throw destinationRefused();
  if (mark !== undefined) throw unreachable(response ? withoutCredentials(response.url()) : undefined, 'net::ERR_CONNECTION_FAILED');
  if (options.proxyUrl && response?.status() === 407) throw proxyCredentialsRefused();
  assertTargetStatus(options.html === undefined ? response : null, options);
}

/** X-Target-Status and X-Final-Url of a failed capture, where known (url mode only, as on success). */
export function targetHeaders(options: CaptureOptions, watch: NavigationWatch | undefined, pageUrl: string): Record<string, string> {
  if (!watch || options.html !== undefined) return {};
  const headers: Record<string, string> = {};
  const response = watch.response;
  if (response && response.headers()[REFUSED_HEADER] === undefined) headers['X-Target-Status'] = String(response.status());
  const url = /^https?:/.test(pageUrl) ? pageUrl : (watch.failure?.url ?? watch.requestedUrl);
  if (url) headers['X-Final-Url'] = withoutCredentials(url);
  return headers;
}
