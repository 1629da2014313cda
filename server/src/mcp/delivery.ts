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

const INLINE_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp']);

/** What every capture result carries as structuredContent, whichever way the file comes back. */
export interface CaptureSummary {
  id: string;
  status: 'succeeded';
  url: string;
  contentType: string;
  bytes: number;
  width: number | null;
  height: number | null;
  delivery: 'inline' | 'link';
  page?: unknown;
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

/** Why a file cannot go inline, or undefined when it can. */
export function inlineRefusal(file: { contentType: string; bytes: number; width: number | null; height: number | null }, budget: InlineBudget): string | undefined {
  const mime = file.contentType.split(';')[0]!.trim();
  if (!INLINE_IMAGE_TYPES.has(mime)) return `${mime} is not an image an agent can view inline`;
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
  return `Capture ${summary.id}: ${summary.contentType}, ${summary.bytes} bytes${size}.`;
}

/** The image itself (never base64 in a text block) plus a one-line summary. */
export function inlineResult(summary: CaptureSummary, data: Uint8Array): CallToolResult {
  return {
    content: [
      { type: 'image', data: Buffer.from(data).toString('base64'), mimeType: summary.contentType.split(';')[0]!.trim() },
      { type: 'text', text: describe(summary) },
    ],
    structuredContent: summary,
  };
}

/** A link to the file, fetched with the same API key (header X-API-Key) while the job's result is kept. */
export function linkResult(summary: CaptureSummary, reason: string | undefined): CallToolResult {
  const name = summary.url.split('/').slice(-2, -1)[0] ?? summary.id;
  return {
    content: [
      { type: 'resource_link', uri: summary.url, name: `capture-${name}`, mimeType: summary.contentType.split(';')[0]!.trim(), description: describe(summary) },
      { type: 'text', text: `${describe(summary)} ${reason ? `Returned as a link (${reason}). ` : ''}Download it with GET ${summary.url} and the same API key (header X-API-Key).` },
    ],
    structuredContent: summary,
  };
}

export function errorResult(message: string, structured?: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }], ...(structured ? { structuredContent: structured } : {}) };
}
