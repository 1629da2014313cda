import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { DaguerreError } from '@daguerre/client';
import { errorResult } from './delivery.js';

/** What the SDK hands a tool's handler beside its arguments: the progress token, the abort signal. */
export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** A service refusal as a tool error the agent can act on: the code, the message naming the field, the details. */
function serviceError(error: unknown): CallToolResult {
  if (error instanceof DaguerreError) {
    const details = error.details === undefined ? '' : ` Details: ${JSON.stringify(error.details)}`;
    return errorResult(`${error.code} (HTTP ${error.status}): ${error.message}.${details}`, {
      status: 'failed',
      error: {
        status: error.status,
        code: error.code,
        message: error.message,
        ...(error.details !== undefined ? { details: error.details } : {}),
      },
    });
  }
  throw error;
}

/** Wraps a tool's handler so that the service's refusals (DaguerreError) come back as tool errors; anything else still throws. */
export function guarded<A>(handler: (args: A, extra: ToolExtra) => Promise<CallToolResult>) {
  return async (args: A, extra: ToolExtra): Promise<CallToolResult> => {
    try {
      return await handler(args, extra);
    } catch (error) {
      return serviceError(error);
    }
  };
}
