import { expect } from 'vitest';

/**
 * What a user checks first on a service they have just started (an installed package, an image):
 * inline HTML as a PNG of the asked width (GET) and as a PDF (POST), with their API key.
 */
export async function expectPngAndPdf(baseUrl: string, apiKey: string, width: number): Promise<void> {
  const png = await fetch(`${baseUrl}/capture?html=${encodeURIComponent('<h1>Hello</h1>')}&viewportWidth=${width}&viewportHeight=300`, {
    headers: { 'X-API-Key': apiKey },
  });
  expect(png.status).toBe(200);
  const pngBytes = Buffer.from(await png.arrayBuffer());
  expect(pngBytes.subarray(1, 4).toString()).toBe('PNG');
  expect(pngBytes.readUInt32BE(16)).toBe(width);
  const pdf = await fetch(`${baseUrl}/capture`, {
    method: 'POST',
    headers: { 'X-API-Key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ html: '<h1>Invoice</h1>', format: 'pdf' }),
  });
  expect(pdf.status).toBe(200);
  expect(
    Buffer.from(await pdf.arrayBuffer())
      .subarray(0, 5)
      .toString(),
  ).toBe('%PDF-');
}
