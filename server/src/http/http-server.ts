import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';
import { LIMITS } from '@daguerre/contract';

/**
 * Big enough for a GET whose `html` holds the documented maximum of characters, percent-encoded
 * (up to 9 bytes per character for 3-byte UTF-8), plus the other parameters.
 */
export const MAX_REQUEST_HEAD_BYTES = LIMITS.htmlMaxLength * 9 + 64 * 1024;

function rawJsonResponse(status: number, reason: string, body: unknown): string {
  const json = JSON.stringify(body);
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`;
}

/**
 * Node answers a request head over the limit with a bare 431 before Express runs; a client expects
 * the API's JSON error body, so the parser error is answered here.
 */
export function createHttpServer(app: Express): Server {
  const server = createServer({ maxHeaderSize: MAX_REQUEST_HEAD_BYTES }, app);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable) return socket.destroy();
    if (error.code === 'HPE_HEADER_OVERFLOW') {
      socket.end(
        rawJsonResponse(400, 'Bad Request', {
          success: false,
          error: {
            code: 'VALIDATION_ERROR',
            message: `The request line and headers exceed ${MAX_REQUEST_HEAD_BYTES} bytes; html may be at most ${LIMITS.htmlMaxLength} characters (send large documents with POST /capture)`,
            details: [{ field: 'html', message: `html must be at most ${LIMITS.htmlMaxLength} characters`, value: null }],
          },
        }),
      );
      return;
    }
    socket.end(
      rawJsonResponse(400, 'Bad Request', { success: false, error: { code: 'INVALID_INPUT', message: 'Malformed HTTP request' } }),
    );
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return server;
}
