/** What a monitor's settings must pass beyond the contract's schema, checked before anything is written: interval and destinations. */
import type { CaptureOptions } from '@daguerre/contract';
import { validationError } from '../errors.js';
import type { AuthenticatedKey } from '../services/api-keys.js';
import type { CaptureService } from '../services/capture-service.js';

/** Refuses an interval shorter than the server's MONITOR_MIN_INTERVAL_SECONDS. */
export function checkMonitorInterval(intervalSeconds: number, minIntervalSeconds: number): void {
  if (intervalSeconds >= minIntervalSeconds) return;
  throw validationError([
    {
      field: 'intervalSeconds',
      message: `intervalSeconds must be at least ${minIntervalSeconds} on this server (MONITOR_MIN_INTERVAL_SECONDS)`,
      value: intervalSeconds,
    },
  ]);
}

/** The destinations a monitor will reach, checked with the egress policy as POST /captures does. */
export async function checkMonitorDestinations(
  checks: {
    captures: Pick<CaptureService, 'cheapChecks'>;
    checkDestination: (field: string, url: string) => Promise<void>;
  },
  key: AuthenticatedKey,
  options: CaptureOptions,
  webhookUrl: string | undefined,
  which: { url: boolean; proxyUrl: boolean } = { url: true, proxyUrl: true },
): Promise<void> {
  // A schedule keeps its options: credentials in a URL would be stored and shown back, so they are refused.
  for (const field of ['url', 'proxyUrl'] as const) {
    const value = options[field];
    if (value === undefined || !which[field]) continue;
    const parsed = new URL(value);
    if (parsed.username || parsed.password) {
      throw validationError([
        {
          field,
          message: `${field} of a monitor must not carry a user name or password: a monitor keeps its options and shows them back (use an allow-listed proxy without credentials)`,
          value: '[REDACTED]',
        },
      ]);
    }
  }
  const checked = {
    ...(which.url ? { url: options.url } : {}),
    ...(which.proxyUrl && options.proxyUrl ? { proxyUrl: options.proxyUrl } : {}),
  };
  await checks.captures.cheapChecks({ key, options: checked as CaptureOptions });
  if (webhookUrl !== undefined) await checks.checkDestination('webhookUrl', webhookUrl);
}
