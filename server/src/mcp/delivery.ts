import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';
import type { Delivery } from './tool-inputs.js';

/**
 * Whether a capture goes back inline or as a link. Known ceilings (docs/mcp.md): Claude Desktop
 * refuses tool results over 1 MB, the Claude API images over 8000 px on a side, the SDK's stdio
 * reader messages over 10 MiB. Base64 grows the bytes by a third, so the default budget is 1 MB
 * of file (MCP_INLINE_MAX_BYTES) and 8000 px (MCP_INLINE_MAX_SIDE_PX).
 */
export interface InlineBudget {
  maxBytes: number;
  maxSidePx: number;
}

/**
 * What a file is to an agent, by its media type: an image it can look at (MCP image content), text
 * it can read (html, markdown, text and anything text/* or JSON), or bytes it can only download
 * (pdf, the mhtml archive, videos and gif). Used for tool results and for resources/read alike.
 */
export type FileKind = 'image' | 'text' | 'binary';

const VIEWABLE_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp']);

export function mediaTypeOf(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase();
}

export function kindOf(contentType: string): FileKind {
  const mime = mediaTypeOf(contentType);
  if (VIEWABLE_IMAGE_TYPES.has(mime)) return 'image';
  if (mime.startsWith('text/') || mime === 'application/json' || mime.endsWith('+json')) return 'text';
  return 'binary';
}

/** What every capture result carries as structuredContent, whichever way the file comes back. */
export interface CaptureSummary {
  id: string;
  status: 'succeeded';
  url: string;
  contentType: string;
  bytes: number;
  width: number | null;
  height: number | null;
  delivery: 'inline' | 'link' | 'embedded';
  [key: string]: unknown;
}

export async function imageSize(bytes: Uint8Array): Promise<{ width: number | null; height: number | null }> {
  try {
    const { width, height } = await sharp(bytes).metadata();
    return { width: width ?? null, height: height ?? null };
  } catch {
    return { width: null, height: null };
  }
}

/**
 * Why a file cannot go inline, or undefined when it can. Text counts twice: it travels as text
 * content and again in structuredContent.text, because some hosts (Claude Code among them) hand the
 * model only structuredContent when a result has it (docs/mcp.md, "What an agent sees").
 */
export function inlineRefusal(
  file: { contentType: string; bytes: number; width: number | null; height: number | null },
  budget: InlineBudget,
): string | undefined {
  const kind = kindOf(file.contentType);
  if (kind === 'binary') return `${mediaTypeOf(file.contentType)} is neither an image an agent can view inline (png, jpeg, webp) nor text`;
  if (kind === 'text') {
    const textBudget = Math.floor(budget.maxBytes / 2);
    return file.bytes > textBudget
      ? `${file.bytes} bytes of text is over the inline budget of ${textBudget} bytes for text (half of ${budget.maxBytes}: it is sent twice)`
      : undefined;
  }
  if (file.bytes > budget.maxBytes) return `${file.bytes} bytes is over the inline budget of ${budget.maxBytes} bytes`;
  const side = Math.max(file.width ?? 0, file.height ?? 0);
  if (side > budget.maxSidePx) return `${side} px is over the inline limit of ${budget.maxSidePx} px on a side`;
  return undefined;
}

export function wantsInline(delivery: Delivery, refusal: string | undefined): boolean {
  return delivery === 'inline' || (delivery === 'auto' && refusal === undefined);
}

function describe(summary: CaptureSummary): string {
  const size = summary.width && summary.height ? `, ${summary.width}×${summary.height} px` : '';
  const quality = summary.quality as { ok: boolean; findings: Array<{ check: string }> } | undefined;
  const warn =
    quality && !quality.ok ? ` Quality warnings: ${quality.findings.map((f) => f.check).join(', ')} (see structuredContent.quality).` : '';
  return `Capture ${summary.id}: ${mediaTypeOf(summary.contentType)}, ${summary.bytes} bytes${size}.${warn}`;
}

/** The file itself: an image as image content, text as text content (never base64 in a text block), plus a one-line summary. */
export function inlineResult(summary: CaptureSummary, data: Uint8Array): CallToolResult {
  const mimeType = mediaTypeOf(summary.contentType);
  if (kindOf(mimeType) === 'text') {
    const text = Buffer.from(data).toString('utf8');
    return {
      content: [
        { type: 'text', text },
        { type: 'text', text: describe(summary) },
      ],
      structuredContent: { ...summary, delivery: 'inline', text },
    };
  }
  return {
    content: [
      { type: 'image', data: Buffer.from(data).toString('base64'), mimeType },
      { type: 'text', text: describe(summary) },
    ],
    structuredContent: { ...summary, delivery: 'inline' },
  };
}

/**
 * A link to the file: the same URI an MCP client reads with resources/read (text as text, the rest
 * as a blob) and an HTTP client downloads with the same API key (header X-API-Key), while the job's
 * result is kept.
 */
export function linkResult(
  summary: CaptureSummary,
  reason: string | undefined,
  options: { readable: boolean } = { readable: true },
): CallToolResult {
  const how = options.readable
    ? `Read it with resources/read on ${summary.url}, or download it with GET and the same API key (header X-API-Key).`
    : `Download it from ${summary.url} (the storage you asked for).`;
  return {
    content: [
      {
        type: 'resource_link',
        uri: summary.url,
        name: `capture-${summary.id}`,
        mimeType: mediaTypeOf(summary.contentType),
        description: describe(summary),
      },
      { type: 'text', text: `${describe(summary)} ${reason ? `Returned as a link (${reason}). ` : ''}${how}` },
    ],
    structuredContent: { ...summary, delivery: 'link' },
  };
}

/** A file with no link to give (a service without async jobs): the bytes as an embedded resource blob. */
export function embeddedResult(summary: CaptureSummary, data: Uint8Array): CallToolResult {
  const uri = `daguerre://captures/${summary.id}`;
  const mimeType = mediaTypeOf(summary.contentType);
  const resource =
    kindOf(mimeType) === 'text'
      ? { uri, mimeType, text: Buffer.from(data).toString('utf8') }
      : { uri, mimeType, blob: Buffer.from(data).toString('base64') };
  return {
    content: [
      { type: 'resource', resource },
      { type: 'text', text: `${describe(summary)} Embedded as a resource (this service keeps no file to link to).` },
    ],
    structuredContent: { ...summary, delivery: 'embedded' },
  };
}

export function errorResult(message: string, structured?: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }], ...(structured ? { structuredContent: structured } : {}) };
}
