import express, { type RequestHandler } from 'express';
import { JSON_BODY_LIMIT, jsonDepth, MAX_JSON_DEPTH } from '../json-limits.js';

// The limits live below every layer: /mcp (mcp/http-guards.ts) reads its own body with the same ones.
export { JSON_BODY_LIMIT, MAX_JSON_DEPTH, jsonDepth } from '../json-limits.js';

/** Raised from body-parser's verify hook; its status and type reach body-errors.ts. */
export class JsonTooDeepError extends Error {
  readonly status = 400;
  readonly statusCode = 400;
  readonly type = 'entity.too.deep';
}

/** express.json with the size limit, and the nesting limit checked on the raw bytes before parsing. */
export function jsonBody(): RequestHandler {
  return express.json({
    limit: JSON_BODY_LIMIT,
    verify: (_req, _res, buffer) => {
      if (jsonDepth(buffer, MAX_JSON_DEPTH) > MAX_JSON_DEPTH)
        throw new JsonTooDeepError(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    },
  });
}
