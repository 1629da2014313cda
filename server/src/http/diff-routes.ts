import { DiffBodySchema, type DiffBody, type ValidationIssue } from '@daguerre/contract';
import type { Request, RequestHandler, Response } from 'express';
import { validationError } from '../errors.js';
import { diffImagePath, type DiffImages } from '../monitors/diff-images.js';
import type { OneOffDiff } from '../monitors/one-off-diff.js';
import { disconnectSignal, InFlight } from './capture-routes.js';
import { baseUrlOf } from './job-routes.js';
import { echoableValue } from '../security/redaction.js';
import { contextOf } from './request-context.js';
import { captureKindOf } from './request-log-routes.js';
import { zodIssuesToApiError } from './validation.js';

export interface DiffRouteDependencies {
  diffs: OneOffDiff;
  images: DiffImages;
}

/**
 * Names a side's fields as `before.url` or `after.jobId` where the contract's generic answer
 * (validation.ts: the top-level field) would say only `before`. Mounted on POST /diff before the
 * contract's own validation, which then sees only bodies that pass.
 */
export function diffBodyFields(): RequestHandler {
  return (req, _res, next) => {
    const parsed = DiffBodySchema.safeParse(req.body);
    if (parsed.success) return next();
    const sideIssues: ValidationIssue[] = [];
    const others = parsed.error.issues.filter((issue) => {
      const [side, field] = issue.path;
      if ((side !== 'before' && side !== 'after') || (issue.path.length < 2 && issue.code !== 'unrecognized_keys')) return true;
      const sideBody = (req.body as Record<string, Record<string, unknown> | undefined>)[side];
      const names = issue.code === 'unrecognized_keys' ? issue.keys : [String(field)];
      for (const name of names) {
        const message =
          issue.code === 'unrecognized_keys'
            ? `${side}.${name} is not a field of a side: give exactly one of url, runId or jobId`
            : issue.message;
        sideIssues.push({ field: `${side}.${name}`, message, value: echoableValue(name, sideBody?.[name]) });
      }
      return false;
    });
    const otherIssues = others.length > 0 ? (zodIssuesToApiError({ issues: others } as never, req.body).details as ValidationIssue[]) : [];
    next(validationError([...sideIssues, ...otherIssues]));
  };
}

/** `POST /diff` and `GET /diffs/{diffId}/{image}`. */
export function diffHandlers(deps: DiffRouteDependencies, shutdown?: AbortSignal, inFlight = new InFlight()) {
  return {
    async diff({ body, req, res }: { body: DiffBody; req: Request; res: Response }) {
      const context = contextOf(res);
      // Shutdown waits for the answer, as for /capture: a capture it stops releases its charge first.
      void inFlight.track(new Promise<void>((resolve) => res.once('close', resolve)));
      const result = await deps.diffs.run({
        body,
        key: context.auth!,
        kind: captureKindOf(req, 'sync'),
        signal: disconnectSignal(res, shutdown),
      });
      const link = (image: 'before' | 'after' | 'diff') => `${baseUrlOf(req)}${diffImagePath(result.diffId, image)}`;
      return {
        status: 200 as const,
        body: {
          success: true as const,
          data: {
            diff: { ...result.diff, diffImageUrl: result.hasDiffImage ? link('diff') : null },
            before: { imageUrl: link('before'), requestId: result.before.requestId },
            after: { imageUrl: link('after'), requestId: result.after.requestId },
            creditsCharged: result.creditsCharged,
          },
        },
      };
    },

    async image({ diffId, image, res }: { diffId: string; image: string; res: Response }) {
      const organizationId = contextOf(res).auth!.organizationId!;
      const file = await deps.images.open(diffId, organizationId, image);
      res.setHeader('Content-Type', 'image/png');
      res.setHeader('Content-Disposition', `inline; filename="diff-${diffId}-${image}.png"`);
      res.setHeader('Content-Length', String(file.size));
      // Streamed from the result store, never held whole in memory.
      return { status: 200 as const, body: file.stream as unknown as Blob };
    },
  };
}
