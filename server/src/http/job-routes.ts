import { captureCredits, type AsyncCaptureOptions } from '@daguerre/contract';
import type { Request, Response } from 'express';
import { ApiError } from '../errors.js';
import type { CaptureJobs } from '../jobs/capture-jobs.js';
import type { JobWithdrawal } from '../jobs/job-cancel.js';
import { statusPath } from '../jobs/capture-jobs.js';
import type { CaptureService } from '../services/capture-service.js';
import type { CreditRepository } from '../store/credit-repository.js';
import { setPageHeaders } from './capture-routes.js';
import { contentTypeOf } from './insight-headers.js';
import { contextOf } from './request-context.js';
import { captureKindOf } from './request-log-routes.js';
import { loopbackPublicBase } from '../mcp/loopback.js';

export interface JobRouteDependencies {
  /** Undefined without REDIS_URL: async captures then answer 503. */
  jobs: CaptureJobs | undefined;
  /** DELETE /captures/{jobId}; undefined without REDIS_URL like `jobs`. */
  withdrawal: JobWithdrawal | undefined;
  captures: CaptureService;
  credits: CreditRepository;
  creditsPerCapture: number;
  checkDestination: (field: string, url: string) => Promise<void>;
}

function requireJobs(jobs: CaptureJobs | undefined): CaptureJobs {
  if (!jobs) {
    // A configuration, not a passing fault: a retry is pointless before the operator acts, hence a long Retry-After.
    throw new ApiError('SERVICE_UNAVAILABLE', 'Async captures need a Redis server: this server runs without REDIS_URL. Use GET /capture, or ask the operator to set REDIS_URL.', { retryAfterSeconds: 300 });
  }
  return jobs;
}

function organizationOf(res: Response): { organizationId: string; keyId: string } {
  const auth = contextOf(res).auth!;
  if (!auth.organizationId) throw new ApiError('NO_ORGANIZATION_CONTEXT', 'This API key belongs to no organization');
  return { organizationId: auth.organizationId, keyId: auth.keyId };
}

/**
 * The address the caller used, so statusUrl, fileUrl and a monitor's links work from where they
 * were sent; for an /mcp tool's loopback call, the address the agent reached /mcp at.
 */
export function baseUrlOf(req: Request): string {
  return loopbackPublicBase(req) ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}

/** `POST /captures`, `GET /captures/{jobId}`, `GET /captures/{jobId}/file` and `DELETE /captures/{jobId}`. */
export function jobHandlers(deps: JobRouteDependencies) {
  return {
    async create({ body, providerKeyHeader, req, res }: { body: AsyncCaptureOptions; providerKeyHeader?: string; req: Request; res: Response }) {
      const jobs = requireJobs(deps.jobs);
      const { organizationId, keyId } = organizationOf(res);
      const { webhookUrl, ...options } = body;
      const key = contextOf(res).auth!;
      // The same early answers as /capture (provider key, refused destinations), before anything is queued.
      await deps.captures.precheck({ key, options, ...(providerKeyHeader ? { providerKeyHeader } : {}) });
      if (webhookUrl !== undefined) await deps.checkDestination('webhookUrl', webhookUrl);
      // The credit check only: credits are reserved and charged when a worker runs the job.
      const balance = await deps.credits.rollOverIfDue(organizationId).catch((error: unknown) => {
        throw new ApiError('SERVICE_UNAVAILABLE', 'Service temporarily unavailable: the database cannot be reached; nothing was queued. Retry shortly.', { logDetail: error, retryAfterSeconds: 5 });
      });
      const remaining = balance?.remaining ?? 0;
      const cost = captureCredits(options, deps.creditsPerCapture);
      if (remaining < cost) {
        throw new ApiError('INSUFFICIENT_CREDITS', `Not enough credits: this capture costs ${cost}, ${remaining} remaining in the current period`);
      }
      const baseUrl = baseUrlOf(req);
      const jobId = await jobs.enqueue({
        organizationId,
        keyId,
        options,
        baseUrl,
        kind: captureKindOf(req, 'async') === 'mcp' ? 'mcp' : 'async',
        ...(key.fairShare ? { fairShare: key.fairShare } : {}),
        ...(providerKeyHeader ? { providerKeyHeader } : {}),
        ...(webhookUrl !== undefined ? { webhookUrl } : {}),
      });
      res.setHeader('Location', statusPath(jobId));
      return { status: 202 as const, body: { success: true as const, data: { jobId, status: 'queued' as const, statusUrl: `${baseUrl}${statusPath(jobId)}` } } };
    },

    async get({ jobId, res }: { jobId: string; res: Response }) {
      const jobs = requireJobs(deps.jobs);
      const { organizationId } = organizationOf(res);
      return { status: 200 as const, body: { success: true as const, data: await jobs.view(jobId, organizationId) } };
    },

    async file({ jobId, res }: { jobId: string; res: Response }) {
      const jobs = requireJobs(deps.jobs);
      const { organizationId } = organizationOf(res);
      const file = await jobs.file(jobId, organizationId);
      // The headers of a binary /capture; X-Request-Id names the request that rendered the file.
      res.setHeader('Content-Type', contentTypeOf(file.mime));
      res.setHeader('Content-Disposition', `inline; filename="${file.fileName}"`);
      res.setHeader('Content-Length', String(file.size));
      res.setHeader('X-Capture-Request-Id', file.requestId);
      // The job's file repeats what its capture saw, as a binary /capture answer does.
      if (file.page) setPageHeaders(res, file.page);
      // Streamed from the result store (a local directory or the deployment's bucket), never held whole in memory.
      return { status: 200 as const, body: file.stream as unknown as Blob };
    },

    async cancel({ jobId, res }: { jobId: string; res: Response }) {
      requireJobs(deps.jobs);
      const { organizationId } = organizationOf(res);
      return { status: 200 as const, body: { success: true as const, data: await deps.withdrawal!.cancel(jobId, organizationId) } };
    },
  };
}
