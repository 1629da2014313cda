import {
  AsyncCaptureBodySchema,
  CaptureBodySchema,
  CaptureLogQuerySchema,
  CreateMonitorBodySchema,
  MonitorRunsQuerySchema,
} from '@daguerre/contract';
import { z } from 'zod';

/**
 * The MCP tools' input schemas, derived from the contract's JSON body schemas (POST /capture and
 * POST /captures), never written out: a parameter added to the contract appears in OpenAPI, the SDK
 * and these tools at once. The JSON body form is used, not the query form, so booleans and numbers
 * are typed as such for the agent.
 */

/** The object inside a body schema (under its cross-field refinement and pdf transform). */
function objectOf(schema: z.ZodTypeAny): z.AnyZodObject {
  let current: z.ZodTypeAny = schema;
  while (current instanceof z.ZodEffects) current = current.innerType();
  if (!(current instanceof z.ZodObject)) throw new TypeError('a capture body schema of the contract is no longer an object');
  return current;
}

/** Set by the transport (the API key) or by the tool itself (capture decides between file and link). */
const NOT_TOOL_ARGUMENTS = { apiKey: true, returnFile: true } as const;

export const DELIVERIES = ['auto', 'inline', 'link'] as const;
export type Delivery = (typeof DELIVERIES)[number];

const delivery = z
  .enum(DELIVERIES)
  .default('auto')
  .describe(
    'How the capture comes back. auto: a small enough image (png, jpeg, webp) inline as image content and small enough text (html, markdown, text) inline as text (see the tool description), anything else (pdf, mhtml, videos, large files) as a resource_link to <service>/captures/{id}/file that resources/read serves. inline: always inline (an error when it cannot be). link: always a link.',
  );

const captureBody = objectOf(CaptureBodySchema).omit(NOT_TOOL_ARGUMENTS);
const asyncBody = objectOf(AsyncCaptureBodySchema).omit({ apiKey: true });

export const captureToolInput = captureBody.extend({ delivery }).strict();
export const captureAsyncToolInput = asyncBody.strict();
export const getCaptureToolInput = z
  .object({
    jobId: z
      .string()
      .uuid('jobId must be the UUID answered by capture_async')
      .describe('The jobId answered by capture_async (or by capture when it ran out of time).'),
    delivery,
  })
  .strict();
/** The filters of GET /captures, from the contract as they are. */
export const listCapturesToolInput = CaptureLogQuerySchema.omit({ apiKey: true }).strict();
/** POST /monitors' body as it is; the service checks its cross-field rules (and the minimum interval) itself. */
export const createMonitorToolInput = objectOf(CreateMonitorBodySchema).strict();
/** GET /monitors/{monitorId}/runs: the monitor and the page of runs. */
export const listMonitorRunsToolInput = MonitorRunsQuerySchema.omit({ apiKey: true })
  .extend({
    monitorId: z
      .string()
      .uuid('monitorId must be the UUID answered by create_monitor')
      .describe('The monitorId answered by create_monitor.'),
  })
  .strict();
export const describeOptionsToolInput = z
  .object({
    names: z.array(z.string()).optional().describe('Only these options (e.g. ["fullPage", "device"]); all of them when left out.'),
  })
  .strict();

export interface OptionDescription {
  name: string;
  type: string;
  description: string;
  values?: readonly string[];
}

function typeOf(schema: z.ZodTypeAny): { type: string; values?: readonly string[] } {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodDefault || schema instanceof z.ZodNullable)
    return typeOf(schema._def.innerType);
  if (schema instanceof z.ZodEffects) return typeOf(schema.innerType());
  if (schema instanceof z.ZodEnum) return { type: 'string', values: schema.options as string[] };
  if (schema instanceof z.ZodArray) {
    const item = typeOf(schema.element);
    return { type: `array of ${item.type}`, ...(item.values ? { values: item.values } : {}) };
  }
  if (schema instanceof z.ZodString) return { type: 'string' };
  if (schema instanceof z.ZodNumber) return { type: 'number' };
  if (schema instanceof z.ZodBoolean) return { type: 'boolean' };
  if (schema instanceof z.ZodRecord) return { type: 'object of strings' };
  return { type: 'value' };
}

/** Every option of the capture tools, from the same schema: name, type, allowed values, description with its default. */
export function describeOptions(names?: readonly string[]): OptionDescription[] {
  const shape = captureAsyncToolInput.shape as Record<string, z.ZodTypeAny>;
  const all = { ...shape, delivery: (captureToolInput.shape as Record<string, z.ZodTypeAny>).delivery! };
  return Object.entries(all)
    .filter(([name]) => names === undefined || names.includes(name))
    .map(([name, schema]) => {
      const { type, values } = typeOf(schema);
      return { name, type, description: schema.description ?? '', ...(values ? { values } : {}) };
    });
}
