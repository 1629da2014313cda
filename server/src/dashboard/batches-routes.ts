import type { Router } from 'express';
import { batchView } from '../jobs/capture-batches.js';
import { BatchRepository } from '../store/batch-repository.js';
import { sendPage, type DashboardServices } from './context.js';
import { dashboardContext, handle, organizationOf } from './session.js';
import { batchesPage } from './views/batches-page.js';

/** `/dashboard/batches`: the organization's latest bulk captures, read from the batch records. */
export function mountBatchRoutes(router: Router, services: DashboardServices): void {
  const batches = new BatchRepository(services.data.db);
  router.get(
    '/batches',
    handle(async (_req, res) => {
      const organizationId = organizationOf(res).organizationId;
      const latest = await batches.latest(organizationId, 20);
      const views = await Promise.all(latest.map(async (batch) => batchView(batch, await batches.items(batch.id))));
      sendPage(res, batchesPage(dashboardContext(res), services.assets, views));
    }),
  );
}
