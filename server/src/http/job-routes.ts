import type { AsyncCaptureOptions } from '@daguerre/contract';
import type { Request, Response } from 'express';
import type { CaptureJobs } from '../jobs/capture-jobs.js';
import type { JobWithdrawal } from '../jobs/job-cancel.js';
import { statusPath } from '../jobs/capture-jobs.js';
import { asyncCapturesUnavailable, type CaptureSubmission } from '../services/capture-submission.js';
import { keyOrganization } from '../services/usage-service.js';
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
  /** POST /captures: the checks, the credits and the queue (services/capture-submission.ts). */
  submissions: CaptureSubmission;
}

function requireJobs(jobs: CaptureJobs | undefined): CaptureJobs {
  if (!jobs) throw asyncCapturesUnavailable();
  return jobs;
}

const organizationOf = (res: Response) => keyOrganization(contextOf(res).auth!);

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
    async create({
      body,
      providerKeyHeader,
      req,
      res,
    }: {
      body: AsyncCaptureOptions;
      providerKeyHeader?: string;
      req: Request;
      res: Response;
    }) {
      const baseUrl = baseUrlOf(req);
      const jobId = await deps.submissions.submitJob({
        key: contextOf(res).auth!,
        body,
        ...(providerKeyHeader ? { providerKeyHeader } : {}),
        baseUrl,
        kind: captureKindOf(req, 'async') === 'mcp' ? 'mcp' : 'async',
      });
      res.setHeader('Location', statusPath(jobId));
      return {
        status: 202 as const,
        body: { success: true as const, data: { jobId, status: 'queued' as const, statusUrl: `${baseUrl}${statusPath(jobId)}` } },
      };
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
