import { CaptureBodySchema, MONITOR_CAPTURE_FIELDS, type CaptureOptions, type CreateMonitorBody } from '@daguerre/contract';
import { validationError } from '../errors.js';

/** The fields of a monitor's body that are its own, not capture options. */
const MONITOR_OWN_FIELDS = ['url', 'intervalSeconds', 'threshold', 'webhookUrl', 'ignoreSelectors', 'name', 'paused'] as const;

/** The capture options of a create or update body: the fields of MONITOR_CAPTURE_FIELDS that were given. */
export function captureOptionsOf(body: Record<string, unknown>): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const field of MONITOR_CAPTURE_FIELDS) if (body[field] !== undefined && body[field] !== null) options[field] = body[field];
  return options;
}

export function ownFieldsOf(body: CreateMonitorBody) {
  return Object.fromEntries(MONITOR_OWN_FIELDS.map((field) => [field, body[field]])) as Pick<
    CreateMonitorBody,
    (typeof MONITOR_OWN_FIELDS)[number]
  >;
}

/**
 * The options one run captures with: the monitor's own, a PNG (what the diff reads), the ignored
 * regions hidden (visibility: hidden keeps the layout, so nothing around them moves), never from
 * the cache (a run must see the page now), and failing uncharged on a 4xx/5xx target (a status
 * change is a failed run, and a failed run is not charged). Answers a 400 naming the field
 * when the combination is refused (checked at create and update, so a run never finds it).
 */
export function runOptions(monitor: { url: string; options: Record<string, unknown>; ignoreSelectors: string[] }): CaptureOptions {
  const hidden = [...((monitor.options.hideSelectors as string[] | undefined) ?? []), ...monitor.ignoreSelectors];
  const input = {
    ...monitor.options,
    url: monitor.url,
    format: 'png',
    cacheEnabled: false,
    failOnHttpError: true,
    ...(hidden.length > 0 ? { hideSelectors: hidden } : {}),
  };
  const parsed = CaptureBodySchema.safeParse(input);
  if (parsed.success) return parsed.data as CaptureOptions;
  throw validationError(
    parsed.error.issues.map((issue) => {
      // The ignored selectors travel as hideSelectors: a list too long together is the caller's ignoreSelectors too.
      const field =
        issue.path[0] === 'hideSelectors' && monitor.ignoreSelectors.length > 0 ? 'ignoreSelectors' : String(issue.path[0] ?? 'request');
      return {
        field,
        message: field === 'ignoreSelectors' ? `hideSelectors and ignoreSelectors together: ${issue.message}` : issue.message,
        value: null,
      };
    }),
  );
}
