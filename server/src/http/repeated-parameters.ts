import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { validationError } from '../errors.js';
import { echoableName, echoableValue } from '../security/redaction.js';

/**
 * A query parameter given twice (`html=a&html=b`) arrives as an array. Answered here, before
 * authentication and validation, so the caller hears what is wrong rather than "API key required"
 * or "html must be a string".
 */
export function rejectRepeatedParameters(): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const repeated = Object.entries(req.query).filter(([, value]) => Array.isArray(value));
    if (repeated.length === 0) {
      next();
      return;
    }
    next(
      validationError(
        repeated.map(([field, value]) => ({
          field: echoableName(field),
          message: `${echoableName(field)} was given more than once; give it once (lists are one comma-separated value)`,
          value: echoableValue(field, value),
        })),
      ),
    );
  };
}
