import express, { type Express } from 'express';
import { ApiError } from '../errors.js';
import type { Logger } from 'pino';
import { errorResponder, sendError } from './error-responder.js';

/**
 * The HTTP side of a `daguerre worker` process: only /health, /ready and /metrics (mounted by
 * the caller), on a port of its own. No API, no dashboard, no docs: workers take work from the queue.
 */
export function createWorkerApp(mountOps: (app: Express) => void, logger?: Logger): Express {
  const app = express();
  app.disable('x-powered-by');
  mountOps(app);
  app.use((req, res) =>
    sendError(
      res,
      new ApiError('NOT_FOUND', `No route for ${req.method} ${req.path}: this is a render worker (health, ready and metrics only)`),
    ),
  );
  // Failures answer the JSON error body here too, never Express's HTML page, which shows a stack and paths.
  if (logger) app.use(errorResponder(logger));
  return app;
}
