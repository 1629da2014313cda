import type { Request } from 'express';
import type { MonitorForm, MonitorFormErrors } from './views/monitors-page.js';

const FORM_FIELDS = new Set<keyof MonitorForm>(['url', 'name', 'intervalSeconds', 'threshold', 'ignoreSelectors', 'webhookUrl', 'keyId']);

/** Whether an issue's field is one the monitor form shows (else its message goes over the form). */
export const isMonitorFormField = (field: string): field is keyof MonitorForm => FORM_FIELDS.has(field as keyof MonitorForm);

/** The dashboard's monitor form as posted, every field trimmed text. */
export function readMonitorForm(req: Request): MonitorForm {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const text = (name: string) => (typeof body[name] === 'string' ? (body[name] as string).trim() : '');
  return {
    url: text('url'),
    name: text('name'),
    intervalSeconds: text('intervalSeconds'),
    threshold: text('threshold'),
    ignoreSelectors: text('ignoreSelectors'),
    webhookUrl: text('webhookUrl'),
    keyId: text('keyId'),
  };
}

/** The form as POST /monitors' body: empty optional fields left out, selectors one a line. */
export function monitorFormBody(form: MonitorForm): Record<string, unknown> {
  const selectors = form.ignoreSelectors
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  return {
    url: form.url,
    intervalSeconds: form.intervalSeconds,
    ...(form.threshold ? { threshold: form.threshold } : {}),
    ...(form.name ? { name: form.name } : {}),
    ...(form.webhookUrl ? { webhookUrl: form.webhookUrl } : {}),
    ...(selectors.length ? { ignoreSelectors: selectors } : {}),
  };
}

/** Issues naming a field of the form go beside it; any other goes over the form. */
export function monitorFormErrors(issues: { field: string; message: string }[]): MonitorFormErrors {
  const errors: MonitorFormErrors = {};
  for (const issue of issues) {
    const field = issue.field.split(/[.[]/)[0]!;
    const message = /[.!?]$/.test(issue.message) ? issue.message : `${issue.message}.`;
    if (isMonitorFormField(field)) errors[field] ??= message;
    else errors.form ??= message;
  }
  return errors;
}
