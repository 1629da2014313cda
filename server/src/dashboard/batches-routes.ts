import type { Response, Router } from 'express';
import { batchView } from '../jobs/capture-batches.js';
import { BatchRepository, type BatchRecord } from '../store/batch-repository.js';
import { sendPage, type DashboardServices } from './context.js';
import { dashboardContext, DASHBOARD_PATH, handle, organizationOf, setFlash } from './session.js';
import { messageReplies } from './message-replies.js';
import { batchPage } from './views/batch-page.js';
import { batchesPage } from './views/batches-page.js';
import { batchHref } from './views/job-views.js';

const UUID = /^[0-9a-f-]{36}$/i;

/**
 * `/dashboard/batches`: the organization's latest bulk captures, read from the batch records, and a
 * page per batch with its items, Cancel while it runs, and its webhook's deliveries
 * (docs/async-and-webhooks.md).
 */
export function mountBatchRoutes(router: Router, services: DashboardServices): void {
  const batches = new BatchRepository(services.data.db);
  const { assets, sessions } = services;
  const { batches: capture, webhooks } = services.jobs;
  const listUrl = `${DASHBOARD_PATH}/batches`;

  const message = messageReplies(assets, { href: listUrl, label: 'Back to batches' });
  const notFound = (res: Response) =>
    message(res, 404, 'Batch not found', 'There is no batch with this id in your organization (kept until its results expire).');

  /** The batch, only when it is the organization's: anyone else gets the same 404 as for no batch at all. */
  const ownBatch = async (res: Response, batchId: string): Promise<BatchRecord | undefined> => {
    const batch = UUID.test(batchId) ? await batches.get(batchId) : undefined;
    return batch && batch.organizationId === organizationOf(res).organizationId ? batch : undefined;
  };

  router.get(
    '/batches',
    handle(async (_req, res) => {
      const organizationId = organizationOf(res).organizationId;
      const latest = await batches.latest(organizationId, 20);
      const views = await Promise.all(latest.map(async (batch) => batchView(batch, await batches.items(batch.id))));
      sendPage(res, batchesPage(dashboardContext(res), services.assets, views));
    }),
  );

  router.get(
    '/batches/:batchId',
    handle(async (req, res) => {
      const batch = await ownBatch(res, String(req.params.batchId));
      if (!batch) return notFound(res);
      const [items, events] = await Promise.all([
        batches.items(batch.id),
        webhooks ? webhooks.list(batch.organizationId, { batchId: batch.id }) : [],
      ]);
      sendPage(
        res,
        batchPage({
          ctx: dashboardContext(res),
          assets,
          batch: batchView(batch, items),
          credits: new Map(items.map((item) => [item.index, item.creditsCharged])),
          hasWebhook: batch.webhookUrl !== null,
          events,
          canAct: capture !== undefined && webhooks !== undefined,
        }),
      );
    }),
  );

  router.post(
    '/batches/:batchId/cancel',
    handle(async (req, res) => {
      if (!capture) return message(res, 503, 'Batches are not available', 'This server runs without REDIS_URL.');
      const batch = await ownBatch(res, String(req.params.batchId));
      if (!batch) return notFound(res);
      const after = await capture.cancel(batch.id, batch.organizationId);
      services.logger.info({ batchId: batch.id, userId: dashboardContext(res).session.userId }, 'dashboard: batch cancelled');
      await setFlash(sessions, res, {
        kind: 'success',
        message:
          batch.state === 'open'
            ? `Batch cancelled: ${after.counts.cancelled} items that had not ended were cancelled and not charged; finished items keep their files.`
            : `The batch had already ended (${after.status}): nothing to cancel.`,
        page: `/batches/${batch.id}`,
      });
      res.redirect(303, batchHref(batch.id));
    }),
  );
}
