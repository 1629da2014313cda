import type { NextFunction, Request, RequestHandler, Response } from 'express';

export type AsyncHandler = (req: Request, res: Response, next: NextFunction) => Promise<unknown>;

/**
 * Express 4 does not catch rejected promises: hand them to the router's error handler. At the
 * root because the MCP endpoint (mcp/), the ops routes (http/) and the dashboard all mount plain
 * Express handlers (docs/architecture.md, the layers).
 */
export const handle =
  (fn: AsyncHandler): RequestHandler =>
  (req, res, next) => {
    fn(req, res, next).catch(next);
  };
