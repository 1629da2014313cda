import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { CaptureBodySchema, CaptureQuerySchema, CaptureResultSchema } from './capture.js';
import { ErrorBodySchema } from './errors.js';
import { UsageQuerySchema, UsageReportSchema } from './usage.js';

const c = initContract();

const authHeaders = z.object({
  'x-api-key': z.string().optional().describe('API key (alternative to the apiKey query parameter)'),
});
const captureHeaders = authHeaders.extend({
  'x-openai-api-key': z.string().optional().describe('Analysis-provider key (preferred over openaiApiKey). Never stored.'),
});

/**
 * The 200 of a capture is the file itself (Content-Type per format) or, with returnFile=false, the
 * JSON CaptureResult. ts-rest has one schema per status, so the JSON form is declared here and the
 * OpenAPI generator adds the binary media types (scripts/generate-openapi.ts).
 */
const captureResponses = {
  200: CaptureResultSchema,
  400: ErrorBodySchema,
  401: ErrorBodySchema,
  402: ErrorBodySchema,
  403: ErrorBodySchema,
  429: ErrorBodySchema,
  500: ErrorBodySchema,
  503: ErrorBodySchema,
  504: ErrorBodySchema,
};

export const captureContract = c.router({
  capture: {
    method: 'GET',
    path: '/capture',
    summary: 'Capture a web page or inline HTML as PNG, WebP, JPEG or PDF',
    description:
      'Renders exactly one of `url` or `html` in headless Chromium. Returns the file (default) or, with returnFile=false, JSON with base64 data. Each successful capture consumes 1 credit; failures consume none.',
    query: CaptureQuerySchema,
    headers: captureHeaders,
    responses: captureResponses,
  },
  captureWithBody: {
    method: 'POST',
    path: '/capture',
    summary: 'Capture, with the options as a JSON body (for html too large for a URL)',
    description: 'Same fields, rules and responses as GET /capture; the fields travel as a JSON object.',
    body: CaptureBodySchema,
    headers: captureHeaders,
    responses: captureResponses,
  },
});

export const usageContract = c.router({
  usage: {
    method: 'GET',
    path: '/usage',
    summary: 'Credit balance and capture rate limit of the organization that owns the API key',
    description: 'Credits of the current billing period and the capture rate limit of the organization that owns the API key. Costs nothing and is not rate limited.',
    query: UsageQuerySchema,
    headers: authHeaders,
    responses: {
      200: UsageReportSchema,
      400: ErrorBodySchema,
      401: ErrorBodySchema,
      403: ErrorBodySchema,
      500: ErrorBodySchema,
      503: ErrorBodySchema,
    },
  },
});

export const contract = c.router({ ...captureContract, ...usageContract }, { strictStatusCodes: true });
export type Contract = typeof contract;
