import { bareHost } from './destination-check.js';

/** How long the egress proxy remembers what happened to a destination. */
const REMEMBERED_MS = 30_000;
const DESTINATIONS_KEPT = 1_000;

/** Node's connection and name errors as Chromium names them. */
const NET_ERROR_OF: Record<string, string> = {
  ECONNREFUSED: 'net::ERR_CONNECTION_REFUSED',
  ECONNRESET: 'net::ERR_CONNECTION_RESET',
  ETIMEDOUT: 'net::ERR_CONNECTION_TIMED_OUT',
  EHOSTUNREACH: 'net::ERR_ADDRESS_UNREACHABLE',
  ENETUNREACH: 'net::ERR_ADDRESS_UNREACHABLE',
  ENOTFOUND: 'net::ERR_NAME_NOT_RESOLVED',
};

/** host:port of a URL, its scheme's port when it names none; undefined when it is no URL. */
function authorityOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return `${bareHost(parsed.hostname)}:${parsed.port || (parsed.protocol === 'https:' ? 443 : 80)}`;
  } catch {
    return undefined;
  }
}

/**
 * What happened to destinations in the last seconds, for the renderer (landing-checks.ts, page-events.ts):
 * Chromium sees every connection the egress proxy could not make as net::ERR_SOCKS_CONNECTION_FAILED,
 * and only the proxy knows whether the policy refused it or why the destination failed.
 */
export class RecentDestinations {
  private readonly failures = new Map<string, { error: string; at: number }>();
  private readonly refusals = new Map<string, number>();

  private static keep<V>(map: Map<string, V>, authority: string, value: V): void {
    map.delete(authority);
    map.set(authority, value);
    if (map.size > DESTINATIONS_KEPT) map.delete(map.keys().next().value!);
  }

  /** Notes why a connection to host:port failed, when Chromium has a name for it. */
  noteFailure(host: string, port: number, error: unknown): void {
    const errno = (error as NodeJS.ErrnoException).code;
    const name = errno ? NET_ERROR_OF[errno] : /timeout/i.test(String(error)) ? 'net::ERR_CONNECTION_TIMED_OUT' : undefined;
    if (name) RecentDestinations.keep(this.failures, `${bareHost(host)}:${port}`, { error: name, at: Date.now() });
  }

  noteRefusal(host: string, port: number): void {
    RecentDestinations.keep(this.refusals, `${host}:${port}`, Date.now());
  }

  /** Chromium's name for why a connection to the host:port of `url` failed in the last 30 seconds, if one did. */
  failureOf(url: string): string | undefined {
    const authority = authorityOf(url);
    const failure = authority === undefined ? undefined : this.failures.get(authority);
    return failure && Date.now() - failure.at < REMEMBERED_MS ? failure.error : undefined;
  }

  /** Whether the host:port of `url` was refused by the policy in the last 30 seconds. */
  refusedRecently(url: string): boolean {
    const authority = authorityOf(url);
    const at = authority === undefined ? undefined : this.refusals.get(authority);
    return at !== undefined && Date.now() - at < REMEMBERED_MS;
  }
}
