import { ApiError } from '../errors.js';
import { MAX_JSON_DEPTH } from './json-body.js';

/** What body-parser (express.json) attaches to the errors it raises. */
interface BodyParserError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
}

/**
 * express.json() failures as the API's error body: the client's mistake (4xx), never a 500.
 * A charset or Content-Encoding it cannot decode is 415; a body that does not inflate or parse is 400.
 */
export function bodyParserError(error: unknown): ApiError | undefined {
  if (typeof error !== 'object' || error === null || error instanceof ApiError) return undefined;
  const { status, statusCode, type, expose } = error as BodyParserError;
  const code = status ?? statusCode;
  // http-errors marks client errors with `expose`; anything else is not the parser's.
  if (code === undefined || code < 400 || code >= 500 || expose !== true) return undefined;
  switch (type) {
    case 'entity.too.large':
      return new ApiError('VALIDATION_ERROR', 'The request body is too large; the JSON body of POST /capture may be at most 1 MiB');
    case 'entity.too.deep':
      return new ApiError(
        'VALIDATION_ERROR',
        `The request body is nested too deeply; arrays and objects may be nested at most ${MAX_JSON_DEPTH} levels`,
      );
    case 'charset.unsupported':
      return new ApiError('INVALID_INPUT', 'Content-Type: the charset of a JSON body must be utf-8 (or be left out)', { status: 415 });
    case 'encoding.unsupported':
      return new ApiError('INVALID_INPUT', 'Content-Encoding: must be identity, gzip, deflate or br (or be left out)', { status: 415 });
    case 'entity.parse.failed':
      return new ApiError('INVALID_INPUT', 'The request body is not valid JSON');
    case 'request.aborted':
    case 'request.size.invalid':
      return new ApiError('INVALID_INPUT', 'The request body ended before its declared Content-Length');
    default:
      // A body that does not decode with its Content-Encoding (zlib errors come without a type).
      return new ApiError(
        'INVALID_INPUT',
        'The request body could not be decoded with its Content-Encoding (identity, gzip, deflate or br) as JSON',
      );
  }
}
