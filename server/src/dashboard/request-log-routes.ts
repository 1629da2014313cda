import { CaptureLogQuerySchema, type CaptureLogQuery } from '@daguerre/contract';
import type { Router } from 'express';
import { stringify } from 'csv-stringify';
import { ApiError } from '../errors.js';
import { captureLogPage, type CaptureLogFilters } from '../services/request-log.js';
import { RequestLogRepository } from '../store/request-log-repository.js';
import { sendPage, type DashboardServices } from './context.js';
import { DASHBOARD_PATH, dashboardContext, handle, organizationOf } from './session.js';
import { filterParams, requestLogPage, type LogFilterForm } from './views/request-log-page.js';

const DAY_MS = 86_400_000;
const PAGE_SIZE = 50;
/** A CSV holds at most this many captures; a narrower period gives the rest. */
export const CSV_MAX_ROWS = 100_000;
const CSV_BATCH = 1_000;

const CSV_COLUMNS = [
  'createdAt',
  'finishedAt',
  'requestId',
  'keyId',
  'keyName',
  'kind',
  'source',
  'target',
  'format',
  'status',
  'httpStatus',
  'errorCode',
  'credits',
  'durationMs',
  'fileSize',
  'jobId',
] as const;

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

/** The form as sent (every field a string, empty when not chosen). */
function formOf(query: Record<string, unknown>): LogFilterForm {
  return { status: text(query.status), keyId: text(query.keyId), from: text(query.from), to: text(query.to) };
}

/**
 * The form's filters in the API's terms, through the contract's own schema (so the dashboard and
 * GET /captures refuse the same things). A date in "to" means through the end of that day.
 */
function filtersOf(form: LogFilterForm, cursor: unknown, limit: number): { filters?: CaptureLogFilters; problem?: string } {
  const to = /^\d{4}-\d{2}-\d{2}$/.test(form.to) ? new Date(Date.parse(form.to) + DAY_MS).toISOString() : form.to;
  const parsed = CaptureLogQuerySchema.safeParse({
    ...filterParams({ ...form, to }),
    ...(typeof cursor === 'string' && cursor ? { cursor } : {}),
    limit,
  });
  if (!parsed.success) return { problem: [...new Set(parsed.error.issues.map((issue) => issue.message))].join('; ') };
  const { apiKey: _key, ...filters }: CaptureLogQuery = parsed.data;
  return { filters };
}

/** `/dashboard/log` and `/dashboard/log.csv`: the organization's request log, read as GET /captures reads it. */
export function mountRequestLogRoutes(router: Router, services: DashboardServices): void {
  const repository = new RequestLogRepository(services.data.db);
  const retentionDays = services.requestLogRetentionDays;

  router.get(
    '/log',
    handle(async (req, res) => {
      const { organizationId } = organizationOf(res);
      const form = formOf(req.query);
      const { filters, problem } = filtersOf(form, req.query.cursor, PAGE_SIZE);
      const keys = await services.data.apiKeys.list(organizationId);
      const csvHref = `${DASHBOARD_PATH}/log.csv?${new URLSearchParams(filterParams(form)).toString()}`;
      const common = {
        ctx: dashboardContext(res),
        assets: services.assets,
        form,
        keys,
        retentionDays,
        csvHref,
        paged: filters?.cursor !== undefined,
      };
      if (!filters) return sendPage(res, requestLogPage({ ...common, captures: [], ...(problem ? { problem } : {}) }), 400);
      const result = await captureLogPage(repository, organizationId, filters, retentionDays).catch((error: unknown) => {
        // A cursor that is not one of ours: the same words GET /captures answers with.
        if (error instanceof ApiError && error.status === 400) return error;
        throw error;
      });
      if (result instanceof ApiError) return sendPage(res, requestLogPage({ ...common, captures: [], problem: result.message }), 400);
      const olderHref = result.nextCursor
        ? `${DASHBOARD_PATH}/log?${new URLSearchParams({ ...filterParams(form), cursor: result.nextCursor }).toString()}`
        : undefined;
      sendPage(res, requestLogPage({ ...common, captures: result.captures, ...(olderHref ? { olderHref } : {}) }));
    }),
  );

  router.get(
    '/log.csv',
    handle(async (req, res) => {
      const { organizationId } = organizationOf(res);
      const { filters: checked, problem } = filtersOf(formOf(req.query), undefined, PAGE_SIZE);
      if (!checked) {
        res.status(400).type('text/plain').send(`These filters cannot be used: ${problem}`);
        return;
      }
      // Larger batches than a page of the API: the export reads the log itself, not through GET /captures.
      const filters = { ...checked, limit: CSV_BATCH };
      // Read a first batch before the headers go out, so a database failure is still a proper error page.
      let batch = await captureLogPage(repository, organizationId, filters, retentionDays);
      const day = new Date(services.now()).toISOString().slice(0, 10);
      res.status(200).type('text/csv; charset=utf-8');
      res.setHeader('Content-Disposition', `attachment; filename="daguerre-request-log-${day}.csv"`);
      // escape_formulas: a key name or URL starting with =, +, - or @ is not run as a formula by a spreadsheet.
      const csv = stringify({ header: true, columns: [...CSV_COLUMNS], escape_formulas: true });
      csv.pipe(res);
      let written = 0;
      try {
        for (;;) {
          for (const capture of batch.captures) {
            if (written >= CSV_MAX_ROWS) break;
            // Backpressure: a slow download does not pile the whole log up in memory.
            if (!csv.write(capture)) await new Promise((resolve) => csv.once('drain', resolve));
            written += 1;
          }
          if (!batch.nextCursor || written >= CSV_MAX_ROWS || res.destroyed) break;
          batch = await captureLogPage(repository, organizationId, { ...filters, cursor: batch.nextCursor }, retentionDays);
        }
        csv.end();
      } catch (error) {
        // Headers are sent: a cut-off download is the only honest answer left.
        services.logger.error({ err: error }, 'dashboard: request log CSV failed part way');
        res.destroy(error as Error);
      }
    }),
  );
}
