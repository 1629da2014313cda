import OpenAI from 'openai';
import { ApiError } from '../errors.js';
import { parseAiAnswer, responseFormatFor } from './ai-schema.js';

/** Where requests go when OPENAI_BASE_URL is not set. */
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** Longest `X-Service-AI-Result` value, in bytes (after escaping); the full text is in JSON mode. */
export const AI_RESULT_HEADER_MAX_BYTES = 1024;

export interface AiAnalysisOptions {
  /** OPENAI_BASE_URL: any OpenAI-compatible chat-completions API. */
  baseUrl?: string;
  /** OPENAI_MODEL. */
  model: string;
  /** OPENAI_TIMEOUT_MS. */
  timeoutMs: number;
}

export interface AnalysisRequest {
  prompt: string;
  image: Buffer;
  /** e.g. image/png; for pdf captures the caller passes a PNG of the page. */
  imageMime: string;
  /** The caller's provider key: used for this one call, never stored or logged. */
  providerKey: string;
  /** openaiSchema: the answer's JSON Schema (as text), sent as a structured output and checked (ai-schema.ts). */
  schema?: string;
  /** Whose request it is: the answer's check waits behind the organization's own schema work only (schema-checker.ts). */
  organizationId: string;
  signal?: AbortSignal;
}

export interface AiResult {
  text: string;
  model: string;
  /** With openaiSchema: the answer parsed and validated; the caller gets it as aiResult itself. */
  data?: Record<string, unknown>;
}

/** Why the provider refused, by HTTP status. */
const STATUS_HINTS: Record<number, string> = {
  400: 'the provider rejected the request',
  401: 'invalid provider key',
  403: 'the provider key may not use this model',
  404: 'model or endpoint not found',
  408: 'the provider timed out',
  413: 'the image is too large for the provider',
  422: 'the provider could not process the request',
  429: 'rate limited or out of quota at the provider',
};

/**
 * Sends the produced image with the caller's prompt to an OpenAI-compatible chat-completions API.
 * The SDK's own error messages can quote part of the key, so failures are rebuilt from the status
 * alone; the client message names the AI stage and the log gets no provider text.
 */
export class AiAnalyzer {
  constructor(private readonly options: AiAnalysisOptions) {}

  get model(): string {
    return this.options.model;
  }

  async analyze(request: AnalysisRequest): Promise<AiResult> {
    const client = new OpenAI({
      apiKey: request.providerKey,
      // Explicit values so the SDK does not fall back to the server's OPENAI_* environment.
      baseURL: this.options.baseUrl ?? DEFAULT_OPENAI_BASE_URL,
      organization: null,
      project: null,
      timeout: this.options.timeoutMs,
      maxRetries: 0,
      logLevel: 'off',
    });
    let completion;
    try {
      completion = await client.chat.completions.create(
        {
          model: this.options.model,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: request.prompt },
                { type: 'image_url', image_url: { url: `data:${request.imageMime};base64,${request.image.toString('base64')}` } },
              ],
            },
          ],
          ...(request.schema ? { response_format: responseFormatFor(request.schema) } : {}),
        },
        request.signal ? { signal: request.signal } : {},
      );
    } catch (error) {
      throw this.failure(error);
    }
    const text = completion.choices?.[0]?.message?.content;
    if (typeof text !== 'string') {
      throw new ApiError('OPERATION_FAILED', 'AI analysis failed: the provider answered without text; nothing was charged', {
        logDetail: { stage: 'ai', model: this.options.model, finishReason: completion.choices?.[0]?.finish_reason },
      });
    }
    const model = completion.model || this.options.model;
    return request.schema
      ? { text, model, data: await parseAiAnswer(request.organizationId, request.schema, text, request.signal) }
      : { text, model };
  }

  private failure(error: unknown): ApiError {
    const logDetail: Record<string, unknown> = {
      stage: 'ai',
      model: this.options.model,
      baseUrl: this.options.baseUrl ?? DEFAULT_OPENAI_BASE_URL,
    };
    const fail = (reason: string) => new ApiError('OPERATION_FAILED', `AI analysis failed: ${reason}; nothing was charged`, { logDetail });
    if (error instanceof OpenAI.APIUserAbortError) return fail('the client disconnected before the analysis finished');
    if (error instanceof OpenAI.APIConnectionTimeoutError)
      return fail(`the provider did not answer within ${this.options.timeoutMs} ms (timeout)`);
    if (error instanceof OpenAI.APIConnectionError) return fail('the provider could not be reached');
    if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
      const status = error.status;
      Object.assign(logDetail, {
        httpStatus: status,
        providerRequestId: error.requestID,
        providerErrorType: error.type,
        providerErrorCode: error.code,
      });
      const hint = STATUS_HINTS[status] ?? (status >= 500 ? 'provider error' : 'unexpected answer');
      return fail(`the provider answered ${status} (${hint})`);
    }
    logDetail.errorName = error instanceof Error ? error.name : typeof error;
    return fail('unexpected error');
  }
}

/** data.aiResult: {text, model}, or with openaiSchema the parsed answer itself. */
export function aiResultBody(result: AiResult): Record<string, unknown> {
  return result.data ?? { text: result.text, model: result.model };
}

/**
 * The analysis as an HTTP header value: CR, LF, tabs and other control characters become spaces;
 * `%` and every non-ASCII character are percent-encoded (UTF-8), so `decodeURIComponent` gives the
 * text back; the result is cut to AI_RESULT_HEADER_MAX_BYTES without splitting an escape.
 */
export function aiResultHeader(text: string, maxBytes = AI_RESULT_HEADER_MAX_BYTES): { value: string; truncated: boolean } {
  const flat = text
    // eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    // A lone surrogate cannot be percent-encoded: it becomes U+FFFD.
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
    .trim();
  let value = '';
  let truncated = false;
  for (const char of flat) {
    const code = char.codePointAt(0)!;
    const piece = char === '%' ? '%25' : code > 0x7e ? encodeURIComponent(char) : char;
    if (value.length + piece.length > maxBytes) {
      truncated = true;
      break;
    }
    value += piece;
  }
  // A value must not end in whitespace (it would be trimmed in transit).
  return { value: truncated ? value.trimEnd() : value, truncated };
}
