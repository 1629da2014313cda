import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One chat-completions request as the stub received it. */
export interface RecordedCompletion {
  authorization: string | undefined;
  model: string | undefined;
  /** The text part of the user message. */
  prompt: string | undefined;
  /** The image part's data URL (data:<mime>;base64,…). */
  imageUrl: string | undefined;
  /** The structured-output request (`response_format`), when one was sent. */
  responseFormat: unknown;
  /** Problems with the request's shape; empty when it is what the service should send. */
  problems: string[];
}

export type StubBehaviour = { kind: 'reply'; text: string; model?: string } | { kind: 'fail'; status: number } | { kind: 'hang' };

interface ContentPart {
  type?: string;
  text?: string;
  image_url?: { url?: string };
}

/**
 * A small OpenAI-compatible server on 127.0.0.1 (POST /v1/chat/completions): it records each
 * request, checks its shape, answers 401 unless the bearer is `expectedKey`, and otherwise replies
 * as told (a canned completion, an error status, or never).
 */
export class OpenAiStub {
  readonly requests: RecordedCompletion[] = [];
  private behaviour: StubBehaviour = { kind: 'reply', text: 'A red page with the word Daguerre.' };
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  /** Base URL for OPENAI_BASE_URL, ending in /v1. */
  url = '';

  constructor(readonly expectedKey: string) {}

  reply(text: string, model?: string): this {
    this.behaviour = { kind: 'reply', text, ...(model ? { model } : {}) };
    return this;
  }

  fail(status: number): this {
    this.behaviour = { kind: 'fail', status };
    return this;
  }

  hang(): this {
    this.behaviour = { kind: 'hang' };
    return this;
  }

  get last(): RecordedCompletion | undefined {
    return this.requests.at(-1);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      return this.json(res, 404, { error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' } });
    }
    const recorded = this.record(req, Buffer.concat(chunks).toString('utf8'));
    this.requests.push(recorded);

    const bearer = recorded.authorization?.replace(/^Bearer /, '');
    if (bearer !== this.expectedKey) {
      // Like the real API, the message quotes the key it got: the service must never pass it on.
      return this.json(res, 401, {
        error: {
          message: `Incorrect API key provided: ${bearer}. You can find your API key at https://platform.openai.com/account/api-keys.`,
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      });
    }
    const behaviour = this.behaviour;
    if (behaviour.kind === 'hang') return; // never answers; stop() closes the socket
    if (behaviour.kind === 'fail') {
      const error =
        behaviour.status === 401
          ? { message: `Incorrect API key provided: ${bearer}.`, type: 'invalid_request_error', code: 'invalid_api_key' }
          : behaviour.status === 429
            ? { message: `Rate limit reached for key ${bearer}`, type: 'requests', code: 'rate_limit_exceeded' }
            : { message: 'The server had an error while processing your request.', type: 'server_error', code: null };
      return this.json(res, behaviour.status, { error });
    }
    return this.json(res, 200, {
      id: `chatcmpl-stub-${this.requests.length}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: behaviour.model ?? recorded.model ?? 'stub-model',
      choices: [
        { index: 0, message: { role: 'assistant', content: behaviour.text, refusal: null }, finish_reason: 'stop', logprobs: null },
      ],
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
    });
  }

  private record(req: IncomingMessage, text: string): RecordedCompletion {
    const problems: string[] = [];
    let body: { model?: string; messages?: Array<{ role?: string; content?: ContentPart[] | string }>; response_format?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      problems.push('body is not JSON');
    }
    const message = body.messages?.find((m) => m.role === 'user');
    if (!message) problems.push('no user message');
    const parts = Array.isArray(message?.content) ? message.content : [];
    const prompt = parts.find((p) => p.type === 'text')?.text;
    const imageUrl = parts.find((p) => p.type === 'image_url')?.image_url?.url;
    if (prompt === undefined) problems.push('no text part');
    if (!imageUrl || !/^data:image\/(png|jpeg|webp);base64,[A-Za-z0-9+/]+=*$/.test(imageUrl))
      problems.push('no data:image/…;base64 image part');
    if (!body.model) problems.push('no model');
    return {
      authorization: req.headers.authorization,
      model: body.model,
      prompt,
      imageUrl,
      responseFormat: body.response_format,
      problems,
    };
  }

  private json(res: ServerResponse, status: number, body: unknown) {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }
}

/** The bytes of a data URL's base64 payload. */
export function dataUrlBytes(url: string): { mime: string; bytes: Buffer } {
  const match = /^data:([^;]+);base64,(.*)$/.exec(url);
  if (!match) throw new Error('not a base64 data URL');
  return { mime: match[1]!, bytes: Buffer.from(match[2]!, 'base64') };
}
