import type { BulkCaptureRequestParsed } from '@daguerre/contract';
import type { Request, Response } from 'express';
import { batchPath, type CaptureBatches } from '../jobs/capture-batches.js';
import { bulkCapturesUnavailable, type CaptureSubmission } from '../services/capture-submission.js';
import { keyOrganization } from '../services/usage-service.js';
import { contextOf } from './request-context.js';

export interface BulkRouteDependencies {
  /** Undefined without REDIS_URL: bulk captures then answer 503. */
  batches: CaptureBatches | undefined;
  /** POST /captures/bulk: every item's checks, the batch's credits and the queue (services/capture-submission.ts). */
  submissions: CaptureSubmission;
}

function requireBatches(batches: CaptureBatches | undefined): CaptureBatches {
  if (!batches) throw bulkCapturesUnavailable();
  return batches;
}

const organizationOf = (res: Response) => keyOrganization(contextOf(res).auth!);

/** `POST /captures/bulk`, `GET /captures/bulk/{batchId}` and `DELETE /captures/bulk/{batchId}`. */
export function bulkHandlers(deps: BulkRouteDependencies) {
  return {
    async create({
      body,
      providerKeyHeader,
      req,
      res,
    }: {
      body: BulkCaptureRequestParsed;
      providerKeyHeader?: string;
      req: Request;
      res: Response;
    }) {
      const data = await deps.submissions.submitBatch({
        key: contextOf(res).auth!,
        items: body.items,
        ...(body.webhookUrl !== undefined ? { webhookUrl: body.webhookUrl } : {}),
        ...(providerKeyHeader ? { providerKeyHeader } : {}),
        baseUrl: `${req.protocol}://${req.get('host') ?? 'localhost'}`,
      });
      res.setHeader('Location', batchPath(data.batchId));
      return { status: 202 as const, body: { success: true as const, data } };
    },

    async get({ batchId, res }: { batchId: string; res: Response }) {
      const { organizationId } = organizationOf(res);
      return {
        status: 200 as const,
        body: { success: true as const, data: await requireBatches(deps.batches).view(batchId, organizationId) },
      };
    },

    async cancel({ batchId, res }: { batchId: string; res: Response }) {
      const { organizationId } = organizationOf(res);
      return {
        status: 200 as const,
        body: { success: true as const, data: await requireBatches(deps.batches).cancel(batchId, organizationId) },
      };
    },
  };
}
