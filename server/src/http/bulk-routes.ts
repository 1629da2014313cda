import { captureCredits, type BulkCaptureRequestParsed, type ValidationIssue } from '@daguerre/contract';
import type { Request, Response } from 'express';
import { ApiError } from '../errors.js';
import { batchPath, type CaptureBatches } from '../jobs/capture-batches.js';
import type { CaptureService } from '../services/capture-service.js';
import type { CreditRepository } from '../store/credit-repository.js';
import { checkAiSchemas, checkSchemaBudget } from '../services/ai-schema.js';
import { contextOf } from './request-context.js';

export interface BulkRouteDependencies {
  /** Undefined without REDIS_URL: bulk captures then answer 503. */
  batches: CaptureBatches | undefined;
  captures: CaptureService;
  credits: CreditRepository;
  creditsPerCapture: number;
  checkDestination: (field: string, url: string) => Promise<void>;
}

function requireBatches(batches: CaptureBatches | undefined): CaptureBatches {
  if (!batches) {
    throw new ApiError('SERVICE_UNAVAILABLE', 'Bulk captures need a Redis server: this server runs without REDIS_URL. Use GET /capture, or ask the operator to set REDIS_URL.');
  }
  return batches;
}

function organizationOf(res: Response): { organizationId: string; keyId: string } {
  const auth = contextOf(res).auth!;
  if (!auth.organizationId) throw new ApiError('NO_ORGANIZATION_CONTEXT', 'This API key belongs to no organization');
  return { organizationId: auth.organizationId, keyId: auth.keyId };
}

/** A 400 about one item, said about `requests[index]`: the caller learns which item and which field. */
function aboutItem(error: unknown, index: number): unknown {
  if (!(error instanceof ApiError) || error.status !== 400) return error;
  const details = Array.isArray(error.details)
    ? (error.details as ValidationIssue[]).map((issue) => ({ ...issue, field: `requests[${index}].${issue.field}` }))
    : [{ field: `requests[${index}]`, message: error.message, value: null }];
  return new ApiError(error.code, `requests[${index}]: ${error.message}`, { details, logDetail: error.options.logDetail });
}

/** `POST /captures/bulk`, `GET /captures/bulk/{batchId}` and `DELETE /captures/bulk/{batchId}`. */
export function bulkHandlers(deps: BulkRouteDependencies) {
  return {
    async create({ body, providerKeyHeader, req, res }: { body: BulkCaptureRequestParsed; providerKeyHeader?: string; req: Request; res: Response }) {
      const batches = requireBatches(deps.batches);
      const { organizationId, keyId } = organizationOf(res);
      const key = contextOf(res).auth!;
      // Every item passes the checks of POST /captures before anything is queued: the cheap ones on
      // every item first, then the schemas within one budget, each different one compiled once.
      for (const [index, item] of body.items.entries()) {
        const { webhookUrl, ...options } = item;
        try {
          await deps.captures.cheapChecks({ key, options, ...(providerKeyHeader ? { providerKeyHeader } : {}) });
          if (webhookUrl !== undefined) await deps.checkDestination('webhookUrl', webhookUrl);
        } catch (error) {
          throw aboutItem(error, index);
        }
      }
      const schemas = body.items.flatMap((item, index) => (item.openaiSchema !== undefined ? [{ index, text: item.openaiSchema }] : []));
      checkSchemaBudget(schemas.map(({ index, text }) => ({ field: `requests[${index}].openaiSchema`, text })));
      await checkAiSchemas(
        organizationId,
        schemas.map(({ text }) => ({ field: 'openaiSchema', text })),
        { about: (error, at) => aboutItem(error, schemas[at]!.index) },
      );
      if (body.webhookUrl !== undefined) await deps.checkDestination('webhookUrl', body.webhookUrl);
      // The credit check covers the whole batch; each item is charged when it succeeds.
      const balance = await deps.credits.rollOverIfDue(organizationId).catch((error: unknown) => {
        throw new ApiError('SERVICE_UNAVAILABLE', 'Service temporarily unavailable: the database cannot be reached; nothing was queued. Retry shortly.', { logDetail: error, retryAfterSeconds: 5 });
      });
      const remaining = balance?.remaining ?? 0;
      const cost = body.items.reduce((sum, item) => sum + captureCredits(item, deps.creditsPerCapture), 0);
      if (remaining < cost) {
        throw new ApiError('INSUFFICIENT_CREDITS', `Not enough credits: this batch costs up to ${cost}, ${remaining} remaining in the current period; nothing was queued`);
      }
      const data = await batches.create({
        organizationId,
        keyId,
        items: body.items,
        baseUrl: `${req.protocol}://${req.get('host') ?? 'localhost'}`,
        ...(body.webhookUrl !== undefined ? { webhookUrl: body.webhookUrl } : {}),
        ...(key.fairShare ? { fairShare: key.fairShare } : {}),
        ...(providerKeyHeader ? { providerKeyHeader } : {}),
      });
      res.setHeader('Location', batchPath(data.batchId));
      return { status: 202 as const, body: { success: true as const, data } };
    },

    async get({ batchId, res }: { batchId: string; res: Response }) {
      const { organizationId } = organizationOf(res);
      return { status: 200 as const, body: { success: true as const, data: await requireBatches(deps.batches).view(batchId, organizationId) } };
    },

    async cancel({ batchId, res }: { batchId: string; res: Response }) {
      const { organizationId } = organizationOf(res);
      return { status: 200 as const, body: { success: true as const, data: await requireBatches(deps.batches).cancel(batchId, organizationId) } };
    },
  };
}
