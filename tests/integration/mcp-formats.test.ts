import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { FORMATS, MIME_TYPES } from '@daguerre/contract';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, connectHttp, textOf } from '../helpers/mcp.js';
import { deleteKeysWithPrefix } from '../helpers/redis-keys.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

/**
 * What an agent gets for every format of the contract through the MCP face (docs/mcp.md, "What an
 * agent sees"), driven by the MCP SDK's Client against the live service: images inline, html,
 * markdown and text inline as text, the rest as links that resources/read serves with the caller's
 * own key (and nobody else's), and the page report, quality report and metadata in structuredContent.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const CLI = fileURLToPath(new URL('../../server/bin/daguerre.js', import.meta.url));
const ARTICLE =
  '<html lang="en"><head><title>Field notes</title><meta property="og:title" content="Heron"></head><body><article><h1>Field notes</h1><p>' +
  'The heron waited by the reeds for a long time. '.repeat(20) +
  '</p><p>A second paragraph about the river.</p></article></body></html>';
const VIEW = { viewportWidth: 320, viewportHeight: 240 };
const VIDEO = { videoDuration: 1, videoFps: 4 };

type Structured = {
  id: string;
  status: string;
  url: string;
  contentType: string;
  bytes: number;
  width: number | null;
  height: number | null;
  delivery: string;
  text?: string;
  page: { title: string; width: number };
  quality: { ok: boolean; findings: unknown[] };
  metadata: { sha256: string; title: string; openGraph: Record<string, string> };
};
const structured = (result: CallToolResult) => result.structuredContent as unknown as Structured;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const MAGIC: Record<string, (bytes: Buffer) => boolean> = {
  pdf: (b) => b.subarray(0, 5).toString() === '%PDF-',
  mhtml: (b) => b.toString('utf8').includes('Content-Type: multipart/related'),
  mp4: (b) => b.subarray(4, 8).toString() === 'ftyp',
  webm: (b) => b.subarray(0, 4).toString('hex') === '1a45dfa3',
  gif: (b) => b.subarray(0, 6).toString() === 'GIF89a',
};

async function organizationKey(service: TestService): Promise<string> {
  const plan = await service.runtime.accounts.createPlan({
    name: `mcp-other-${Date.now()}-${Math.random()}`,
    tier: 'test',
    creditsPerMonth: 10,
  });
  const org = await service.runtime.accounts.createOrganization('Other org', plan);
  return (await service.runtime.apiKeys.create({ organizationId: org.id, name: 'other' })).key;
}

describe('each format through /mcp with async jobs (Redis)', () => {
  let service: TestService;
  let client: Client;
  const prefix = `rs-test-mcp-formats-${randomBytes(4).toString('hex')}`;
  const files = new Map<string, { result: CallToolResult; bytes: Buffer }>();

  beforeAll(async () => {
    // A 200 000-byte budget: images up to that inline, text up to 100 000 bytes.
    service = await startTestService({
      credits: 100,
      env: { REDIS_URL, JOB_QUEUE_PREFIX: prefix, CAPTURE_WORKERS: '1', RATE_LIMIT_MAX: '1000', MCP_INLINE_MAX_BYTES: '200000' },
    });
    client = await connectHttp(service.url, service.apiKey);
  });
  afterAll(async () => {
    await client?.close();
    await service?.stop();
    await deleteKeysWithPrefix(REDIS_URL, prefix);
  });

  it(
    'gives every format of the contract the way docs/mcp.md says, with page, quality and metadata in structuredContent',
    { timeout: 180_000 },
    async () => {
      for (const format of FORMATS) {
        const video = ['mp4', 'webm', 'gif'].includes(format) ? VIDEO : {};
        const result = await callTool(client, 'capture', { html: ARTICLE, format, ...VIEW, ...video, metadata: true });
        expect(result.isError, `${format}: ${textOf(result)}`).toBeFalsy();
        const data = structured(result);
        // The file as GET /captures/{id}/file gives it, to compare with what MCP gave.
        const download = await fetch(`${service.url}/captures/${data.id}/file`, { headers: { 'X-API-Key': service.apiKey } });
        expect(download.status, format).toBe(200);
        const bytes = Buffer.from(await download.arrayBuffer());
        files.set(format, { result, bytes });
        expect(data, format).toMatchObject({
          status: 'succeeded',
          contentType: MIME_TYPES[format],
          bytes: bytes.length,
          url: `${service.url}/captures/${data.id}/file`,
        });
        expect(data.page.title, format).toBe('Field notes');
        expect(typeof data.quality.ok, format).toBe('boolean');
        expect(data.metadata.sha256, format).toBe(sha256(bytes));
        expect(data.metadata.openGraph, format).toMatchObject({ title: 'Heron' });

        if (['png', 'jpeg', 'webp'].includes(format)) {
          const image = result.content.find((c) => c.type === 'image') as { data: string; mimeType: string };
          expect(image.mimeType, format).toBe(MIME_TYPES[format]);
          expect(Buffer.from(image.data, 'base64').equals(bytes), format).toBe(true);
          const { width, height } = await sharp(bytes).metadata();
          expect([width, height, data.width, data.height], format).toEqual([320, 240, 320, 240]);
          expect(data.delivery).toBe('inline');
        } else if (['html', 'markdown', 'text'].includes(format)) {
          const text = bytes.toString('utf8');
          expect((result.content[0] as { text: string }).text, format).toBe(text);
          // Mirrored for hosts that hand the model only structuredContent.
          expect(data.text, format).toBe(text);
          expect(data.delivery).toBe('inline');
          expect(
            result.content.some((c) => c.type === 'resource_link' || c.type === 'image'),
            format,
          ).toBe(false);
        } else {
          const link = result.content.find((c) => c.type === 'resource_link') as { uri: string; mimeType: string };
          expect(link, format).toMatchObject({ uri: data.url, mimeType: MIME_TYPES[format] });
          expect(data.delivery).toBe('link');
          const read = await client.readResource({ uri: link.uri });
          const content = read.contents[0] as { uri: string; mimeType: string; blob?: string; text?: string };
          expect(content).toMatchObject({ uri: link.uri, mimeType: MIME_TYPES[format] });
          expect(content.text, format).toBeUndefined();
          const blob = Buffer.from(content.blob!, 'base64');
          expect(blob.equals(bytes), format).toBe(true);
          expect(MAGIC[format]!(blob), format).toBe(true);
        }
      }
      expect(files.get('markdown')!.bytes.toString('utf8')).toMatch(/^# Heron\n\n## Field notes\n/);
      expect(files.get('html')!.bytes.toString('utf8')).toContain('<h1>Field notes</h1>');
      expect(files.get('text')!.bytes.toString('utf8')).toContain('A second paragraph about the river.');
      // One credit each: a 1 s video is one started block of 10 s.
      expect((await service.client.usage()).credits.usedThisPeriod).toBe(FORMATS.length);
    },
  );

  it('sends text over half the budget as a link that resources/read returns as text, as it does for delivery "link"', async () => {
    // Written by a script: an html argument itself is limited to 100 000 characters.
    const long = `<html><body><h1>Long</h1><p id="p"></p><script>document.getElementById('p').textContent = 'word '.repeat(30000)</script></body></html>`;
    const big = await callTool(client, 'capture', { html: long, format: 'text' });
    expect(big.isError, textOf(big)).toBeFalsy();
    expect(structured(big)).toMatchObject({ delivery: 'link', contentType: 'text/plain' });
    expect(structured(big).bytes).toBeGreaterThan(100_000);
    expect(structured(big).text).toBeUndefined();
    expect(textOf(big)).toMatch(/over the inline budget of 100000 bytes for text/);
    const read = await client.readResource({ uri: structured(big).url });
    expect((read.contents[0] as { text: string }).text).toMatch(/^Long\n\nword word/);
    expect(Buffer.byteLength((read.contents[0] as { text: string }).text)).toBe(structured(big).bytes);

    const linked = await callTool(client, 'get_capture', { jobId: structured(files.get('markdown')!.result).id, delivery: 'link' });
    expect(linked.content.find((c) => c.type === 'resource_link')).toMatchObject({ mimeType: 'text/markdown' });
    const text = await client.readResource({ uri: structured(linked).url });
    expect(text.contents[0]).toMatchObject({ mimeType: 'text/markdown', text: files.get('markdown')!.bytes.toString('utf8') });
  });

  it('serves the same links over stdio (`daguerre mcp`), whose template is written from DAGUERRE_URL', async () => {
    const stdio = new Client({ name: 'daguerre-stdio-formats', version: '1.0.0' });
    // A trailing slash in the address must not change the links or the template.
    const env = { ...getDefaultEnvironment(), DAGUERRE_URL: `${service.url}/`, DAGUERRE_API_KEY: service.apiKey };
    await stdio.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env, stderr: 'pipe' }));
    try {
      const pdf = await callTool(stdio, 'capture', { html: ARTICLE, format: 'pdf' });
      expect(pdf.isError, textOf(pdf)).toBeFalsy();
      expect(structured(pdf).url).toBe(`${service.url}/captures/${structured(pdf).id}/file`);
      const read = await stdio.readResource({ uri: structured(pdf).url });
      expect(MAGIC.pdf!(Buffer.from((read.contents[0] as { blob: string }).blob, 'base64'))).toBe(true);
      const text = await stdio.readResource({ uri: structured(files.get('text')!.result).url });
      expect((text.contents[0] as { text: string }).text).toBe(files.get('text')!.bytes.toString('utf8'));
    } finally {
      await stdio.close();
    }
  });

  it("answers another organization's link, a bad uri and an unknown one with JSON-RPC errors, never the file", async () => {
    const other = await connectHttp(service.url, await organizationKey(service));
    try {
      const pdf = structured(files.get('pdf')!.result);
      const refused = await other.readResource({ uri: pdf.url }).then(
        () => undefined,
        (error: { code: number; message: string }) => error,
      );
      expect(refused).toMatchObject({ code: -32002 });
      expect(refused!.message).toMatch(/no capture job .* for this API key/);
      const state = await callTool(other, 'get_capture', { jobId: pdf.id });
      expect(state.isError).toBe(true);
      expect(textOf(state)).toMatch(/NOT_FOUND/);
    } finally {
      await other.close();
    }
    const codeOf = (uri: string) =>
      client.readResource({ uri }).then(
        () => 0,
        (error: { code: number }) => error.code,
      );
    expect(await codeOf('not a uri')).toBe(-32602);
    expect(await codeOf('https://elsewhere.example/captures/x/file')).toBe(-32002);
    expect(await codeOf(`${service.url}/captures/not-a-job/file`)).toBe(-32002);
    expect(await codeOf(`${service.url}/captures/00000000-0000-4000-8000-000000000000/file`)).toBe(-32002);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      expect.objectContaining({ name: 'capture-file', uriTemplate: `${service.url}/captures/{jobId}/file` }),
    ]);
  });
});

describe('each kind of format through /mcp on a service without async jobs', () => {
  let service: TestService;
  let client: Client;

  beforeAll(async () => {
    service = await startTestService({ credits: 20, env: { RATE_LIMIT_MAX: '1000' } });
    client = await connectHttp(service.url, service.apiKey);
  });
  afterAll(async () => {
    await client?.close();
    await service?.stop();
  });

  it('returns text inline, images inline and a pdf or mhtml embedded, each with its page, quality and metadata', async () => {
    const markdown = await callTool(client, 'capture', { html: ARTICLE, format: 'markdown', metadata: true });
    expect(markdown.isError, textOf(markdown)).toBeFalsy();
    expect((markdown.content[0] as { text: string }).text).toMatch(/^# Heron\n\n## Field notes\n/);
    expect(structured(markdown)).toMatchObject({ delivery: 'inline', contentType: 'text/markdown', page: { title: 'Field notes' } });
    expect(structured(markdown).metadata.sha256).toBe(sha256(Buffer.from(structured(markdown).text!, 'utf8')));

    const png = await callTool(client, 'capture', { html: ARTICLE, ...VIEW, metadata: true });
    const image = png.content.find((c) => c.type === 'image') as { data: string };
    expect(structured(png)).toMatchObject({ delivery: 'inline', width: 320, height: 240, quality: { ok: true } });
    expect(structured(png).metadata.sha256).toBe(sha256(Buffer.from(image.data, 'base64')));

    // A pdf has no file in JSON mode: taken binary, described by its headers (the compact metadata).
    const pdf = await callTool(client, 'capture', { html: ARTICLE, format: 'pdf', metadata: true });
    expect(pdf.isError, textOf(pdf)).toBeFalsy();
    const embedded = pdf.content.find((c) => c.type === 'resource') as { resource: { mimeType: string; blob: string } };
    const pdfBytes = Buffer.from(embedded.resource.blob, 'base64');
    expect(MAGIC.pdf!(pdfBytes)).toBe(true);
    expect(structured(pdf)).toMatchObject({
      delivery: 'embedded',
      contentType: 'application/pdf',
      page: { title: 'Field notes' },
      metadata: { title: 'Field notes', sha256: sha256(pdfBytes) },
    });
    expect(typeof structured(pdf).quality.ok).toBe('boolean');

    const mhtml = await callTool(client, 'capture', { html: ARTICLE, format: 'mhtml' });
    const archive = mhtml.content.find((c) => c.type === 'resource') as { resource: { mimeType: string; blob: string } };
    expect(archive.resource.mimeType).toBe('multipart/related');
    expect(MAGIC.mhtml!(Buffer.from(archive.resource.blob, 'base64'))).toBe(true);
    expect((await service.client.usage()).credits.usedThisPeriod).toBe(4);
  });
});
