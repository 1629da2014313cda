import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, ReadResourceRequestSchema, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { DaguerreError, type DaguerreClient } from '@daguerre/client';
import { kindOf, mediaTypeOf } from './delivery.js';

/**
 * resources/read for the links `capture` and `get_capture` return (`<service>/captures/{jobId}/file`):
 * the same URI an HTTP client downloads with its key, so a link stays fetchable both ways. The file
 * is read through the SDK with the caller's own key, so another organization's job id is simply not
 * found. Text formats come back as `text`, everything else as a base64 `blob` (docs/mcp.md).
 */

/** The MCP spec's code for a resource that does not exist (server/resources, "Error Handling"). */
export const RESOURCE_NOT_FOUND = -32002;

/**
 * Largest file resources/read returns: the SDK's stdio reader drops the connection on a message over
 * 10 MiB, and base64 grows 7 MiB to 9.3 MiB. A larger file (long videos) is for GET with the key.
 */
export const RESOURCE_READ_MAX_BYTES = 7 * 1024 * 1024;

/** Far above any link this server makes; the SDK's template matcher throws on very long URIs. */
const MAX_URI_LENGTH = 4096;

/**
 * A JSON-RPC error of resources/read. Not the SDK's McpError: its message already starts with
 * "MCP error <code>:", and the client adds that prefix again.
 */
export class ResourceReadError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The service's address as links name it: what `new URL()` makes of it, without a trailing slash, so links and template agree. */
export function normalizedBaseUrl(raw: string): string {
  const url = new URL(raw);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

export function captureFileUrl(publicBaseUrl: string, jobId: string): string {
  return `${publicBaseUrl}/captures/${jobId}/file`;
}

/** A service refusal as the JSON-RPC error of resources/read. */
function readError(error: unknown, jobId: string): ResourceReadError {
  if (!(error instanceof DaguerreError))
    return new ResourceReadError(ErrorCode.InternalError, `Reading capture ${jobId} failed: ${String(error)}`);
  const detail = `${error.code} (HTTP ${error.status}): ${error.message}`;
  if (error.status === 404)
    return new ResourceReadError(RESOURCE_NOT_FOUND, `Resource not found: no capture job ${jobId} for this API key (${detail})`);
  if (error.status === 409)
    return new ResourceReadError(RESOURCE_NOT_FOUND, `Resource not found: capture ${jobId} has no file (${detail})`);
  if (error.status === 400) return new ResourceReadError(ErrorCode.InvalidParams, detail);
  return new ResourceReadError(ErrorCode.InternalError, detail);
}

async function readCaptureFile(client: DaguerreClient, uri: string, jobId: string): Promise<ReadResourceResult> {
  if (!UUID.test(jobId)) throw new ResourceReadError(RESOURCE_NOT_FOUND, `Resource not found: ${jobId} is not a capture job id (a UUID)`);
  const job = await client.getCapture(jobId).catch((error: unknown) => {
    throw readError(error, jobId);
  });
  if (job.status !== 'succeeded' || !job.result) {
    const why =
      job.status === 'failed'
        ? `failed (${job.error?.code ?? 'OPERATION_FAILED'})`
        : `${job.status}; call get_capture until it has succeeded`;
    throw new ResourceReadError(RESOURCE_NOT_FOUND, `Resource not found: capture ${jobId} has no file yet: it is ${why}`);
  }
  if (job.result.fileSize > RESOURCE_READ_MAX_BYTES) {
    throw new ResourceReadError(
      ErrorCode.InvalidParams,
      `Capture ${jobId} is ${job.result.fileSize} bytes, over the ${RESOURCE_READ_MAX_BYTES} bytes resources/read returns (an MCP message must stay under 10 MiB); download it with GET ${uri} and the same API key (header X-API-Key)`,
    );
  }
  const file = await client.getCaptureFile(jobId).catch((error: unknown) => {
    throw readError(error, jobId);
  });
  const mimeType = mediaTypeOf(file.contentType);
  const body = Buffer.from(file.bytes);
  const content =
    kindOf(mimeType) === 'text' ? { uri, mimeType, text: body.toString('utf8') } : { uri, mimeType, blob: body.toString('base64') };
  return { contents: [content] };
}

export function registerCaptureResources(server: McpServer, deps: { client: DaguerreClient; publicBaseUrl: string }): void {
  const pattern = captureFileUrl(deps.publicBaseUrl, '{jobId}');
  // No list callback: a job's file is reached from the result that names it, not browsed.
  const template = new ResourceTemplate(pattern, { list: undefined });
  server.registerResource(
    'capture-file',
    template,
    {
      title: 'File of a capture job',
      description:
        'The file of a succeeded capture job, as capture and get_capture link it: html, markdown and text as text, images, pdf, mhtml and videos as a base64 blob. Readable with the API key that made the capture while the result is kept.',
    },
    (uri, variables) => readCaptureFile(deps.client, uri.href, String(variables.jobId)),
  );
  // The SDK's own resources/read handler lets `new URL()` throw on a malformed uri, which goes out as
  // -32603 Internal error; this one answers -32602 for a uri that is not one and -32002 for one it does not serve.
  server.server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    let uri: URL;
    try {
      if (request.params.uri.length > MAX_URI_LENGTH) throw new RangeError('too long');
      uri = new URL(request.params.uri);
    } catch {
      throw new ResourceReadError(
        ErrorCode.InvalidParams,
        `uri ${JSON.stringify(request.params.uri.slice(0, 200))} is not an absolute URI; read the links capture and get_capture return (${pattern})`,
      );
    }
    const variables = template.uriTemplate.match(uri.href);
    if (!variables)
      throw new ResourceReadError(
        RESOURCE_NOT_FOUND,
        `Resource not found: ${uri.href}. This server reads the links capture and get_capture return: ${pattern}`,
      );
    return readCaptureFile(deps.client, uri.href, String(variables.jobId));
  });
}
