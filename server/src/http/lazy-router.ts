import type { RequestHandler } from 'express';

/**
 * A router whose module is loaded at its first request rather than at start: a face few requests
 * use (the MCP endpoint) then costs a process nothing until it is used, and a `daguerre worker`,
 * which never serves it, nothing at all (docs/scaling.md, "Memory of an idle worker"). A failed
 * load answers that request through the error responder and is tried again on the next one.
 */
export function lazyRouter(load: () => Promise<RequestHandler>): RequestHandler {
  let loading: Promise<RequestHandler> | undefined;
  return (req, res, next) => {
    loading ??= load();
    loading.then(
      (router) => {
        try {
          router(req, res, next);
        } catch (error) {
          next(error);
        }
      },
      (error: unknown) => {
        loading = undefined;
        next(error);
      },
    );
  };
}
