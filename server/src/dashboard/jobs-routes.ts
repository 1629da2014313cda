import { pipeline } from 'node:stream/promises';
import { CANCELLED_CODE } from '@daguerre/contract';
import type { Response, Router } from 'express';
import { ApiError } from '../errors.js';
import { contentTypeOf } from '../http/insight-headers.js';
import { BatchRepository } from '../store/batch-repository.js';
import type { JobRecord } from '../store/job-record.js';
import { JobRepository } from '../store/job-repository.js';
import { sendPage, type DashboardServices } from './context.js';
import { dashboardContext, DASHBOARD_PATH, handle, organizationOf, setFlash } from './session.js';
import { messageReplies } from './message-replies.js';
import { jobPage } from './views/job-page.js';
import { batchHref, jobHref } from './views/job-views.js';
import { jobsPage } from './views/jobs-page.js';

const UUID = /^[0-9a-f-]{36}$/i;

/** A file's name as a header value: printable ASCII without quotes (names are generated, this only keeps it so). */
const headerSafe = (name: string) => name.replace(/[^\x20-\x7e]|["\\]/g, '_');

/**
 * `/dashboard/jobs`: the organization's async jobs, one page per job with its file (streamed under
 * the session, no API key) and Cancel, and `Send again` for any webhook event of the organization.
 * Records are read from the database; acting needs the queue (REDIS_URL).
 */
export function mountJobRoutes(router: Router, services: DashboardServices): void {
  const { data, assets, sessions } = services;
  const { jobs, withdrawal, webhooks } = services.jobs;
  const records = new JobRepository(data.db, data.credits);
  const batches = new BatchRepository(data.db);
  const listUrl = `${DASHBOARD_PATH}/jobs`;

  const message = messageReplies(assets, { href: listUrl, label: 'Back to jobs' });
  const notFound = (res: Response) =>
    message(
      res,
      404,
      'Job not found',
      'There is no async job with this id in your organization (finished jobs are kept until their result expires).',
    );
  const noQueue = (res: Response) =>
    message(
      res,
      503,
      'Async jobs are not available',
      'This server runs without REDIS_URL, so async jobs cannot be acted on. Ask the operator to set REDIS_URL.',
    );

  /** The job, only when it is the organization's: anyone else gets the same 404 as for no job at all. */
  const ownJob = async (res: Response, jobId: string): Promise<JobRecord | undefined> => {
    const job = UUID.test(jobId) ? await records.get(jobId) : undefined;
    return job && job.organizationId === organizationOf(res).organizationId ? job : undefined;
  };

  router.get(
    '/jobs',
    handle(async (_req, res) => {
      const latest = await records.latest(organizationOf(res).organizationId, 50);
      const batchOf = await batches.batchesOfJobs(latest.map((job) => job.id));
      const rows = latest.map((job) => ({ job, batchId: batchOf.get(job.id) }));
      sendPage(res, jobsPage(dashboardContext(res), assets, rows, { queueAvailable: jobs !== undefined }));
    }),
  );

  router.get(
    '/jobs/:jobId',
    handle(async (req, res) => {
      const job = await ownJob(res, String(req.params.jobId));
      if (!job) return notFound(res);
      const organizationId = organizationOf(res).organizationId;
      const [keys, batchId, events] = await Promise.all([
        data.apiKeys.list(organizationId),
        batches.batchOfJob(job.id),
        webhooks ? webhooks.list(organizationId, { jobId: job.id }) : [],
      ]);
      const keyName = keys.find((key) => key.id === job.apiKeyId)?.name;
      sendPage(
        res,
        jobPage({
          ctx: dashboardContext(res),
          assets,
          job,
          keyName,
          batchId,
          events,
          canAct: withdrawal !== undefined && webhooks !== undefined,
        }),
      );
    }),
  );

  router.get(
    '/jobs/:jobId/file',
    handle(async (req, res) => {
      if (!jobs) return noQueue(res);
      const job = await ownJob(res, String(req.params.jobId));
      if (!job) return notFound(res);
      let file: Awaited<ReturnType<typeof jobs.file>>;
      try {
        file = await jobs.file(job.id, job.organizationId);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        return message(res, error.status, error.status === 409 ? 'No file yet' : 'File not found', error.message);
      }
      // An image opens in the tab; anything else (a PDF, a page's HTML, a video) is downloaded, so a
      // captured page's markup never runs as a document of the dashboard's origin.
      const inline = /^image\/(png|jpeg|webp|gif)$/.test(file.mime);
      res.setHeader('Content-Type', contentTypeOf(file.mime));
      res.setHeader('Content-Length', String(file.size));
      res.setHeader('Content-Disposition', `${inline ? 'inline' : 'attachment'}; filename="${headerSafe(file.fileName)}"`);
      // Chromium shows an image in a document it styles inline; sandboxed, so nothing there runs.
      res.setHeader('Content-Security-Policy', "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox");
      await pipeline(file.stream, res).catch((error: unknown) => {
        services.logger.warn({ jobId: job.id, err: error }, 'dashboard: streaming a job file failed');
        res.destroy();
      });
    }),
  );

  router.post(
    '/jobs/:jobId/cancel',
    handle(async (req, res) => {
      if (!withdrawal) return noQueue(res);
      const job = await ownJob(res, String(req.params.jobId));
      if (!job) return notFound(res);
      const after = await withdrawal.cancel(job.id, job.organizationId);
      services.logger.info({ jobId: job.id, userId: dashboardContext(res).session.userId }, 'dashboard: job cancelled');
      const cancelled = (job.status === 'queued' || job.status === 'active') && after.error?.code === CANCELLED_CODE;
      await setFlash(sessions, res, {
        kind: 'success',
        message: cancelled ? 'Job cancelled: it was not charged.' : `The job had already ended (${after.status}): nothing to cancel.`,
        page: `/jobs/${job.id}`,
      });
      res.redirect(303, jobHref(job.id));
    }),
  );

  router.post(
    '/webhook-events/:eventId/redeliver',
    handle(async (req, res) => {
      if (!webhooks) return noQueue(res);
      const organizationId = organizationOf(res).organizationId;
      let event: Awaited<ReturnType<typeof webhooks.redeliver>>;
      try {
        event = await webhooks.redeliver(String(req.params.eventId), organizationId);
      } catch (error) {
        if (error instanceof ApiError && error.status === 404)
          return message(res, 404, 'Webhook event not found', 'There is no webhook event with this id in your organization.');
        throw error;
      }
      services.logger.info(
        { messageId: event.eventId, userId: dashboardContext(res).session.userId },
        'dashboard: webhook event sent again',
      );
      const back = event.jobId
        ? { path: `/jobs/${event.jobId}`, href: jobHref(event.jobId) }
        : { path: `/batches/${event.batchId}`, href: batchHref(event.batchId!) };
      await setFlash(sessions, res, {
        kind: 'success',
        message: `Sent again: one more attempt of ${event.eventId} is queued, under the same webhook-id. It shows below once made.`,
        page: back.path,
      });
      res.redirect(303, back.href);
    }),
  );
}
