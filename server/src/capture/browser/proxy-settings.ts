import type { CaptureOptions } from '@daguerre/contract';
import { bareHost } from '../../security/destination-check.js';
import type { UpstreamProxy } from '../../security/egress-proxy.js';

/**
 * The proxy server for Chromium (scheme, host and port) and its credentials: proxyUsername and
 * proxyPassword, or else those written into proxyUrl (http://user:pass@host:port).
 */
export function proxySettings(
  options: CaptureOptions,
): { server: string; upstream: UpstreamProxy; credentials?: { username: string; password: string } } | undefined {
  if (!options.proxyUrl) return undefined;
  const url = new URL(options.proxyUrl);
  const username = options.proxyUsername ?? (url.username ? decodeURIComponent(url.username) : undefined);
  const password = options.proxyPassword ?? (url.password ? decodeURIComponent(url.password) : '');
  const credentials = username !== undefined ? { username, password } : undefined;
  const upstream: UpstreamProxy = {
    host: bareHost(url.hostname),
    port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    ...(credentials ?? {}),
  };
  return { server: url.origin, upstream, ...(credentials ? { credentials } : {}) };
}
