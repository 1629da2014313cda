import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readFileSync } from 'node:fs';
const { url, key } = JSON.parse(readFileSync('/tmp/mcpdev/serve.out', 'utf8'));
const client = new Client({ name: 'x', version: '1' });
await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { 'X-API-Key': key } } }));
const html = '<html lang="en"><head><title>Field notes</title></head><body><article><h1>Field notes</h1><p>' + 'The heron waited by the reeds for a long time. '.repeat(20) + '</p><p>Second paragraph about the river.</p></article></body></html>';
for (const format of (process.argv[2] ?? 'png,html,markdown,text,pdf,mhtml,gif').split(',')) {
  const t = Date.now();
  const r: any = await client.callTool({ name: 'capture', arguments: { html, format, viewportWidth: 320, viewportHeight: 240, metadata: true, ...(['mp4','webm','gif'].includes(format) ? { videoDuration: 1, videoFps: 4 } : {}) } });
  console.log('==', format, Date.now() - t, 'ms', r.isError ? 'ERROR' : '');
  console.log(JSON.stringify(r.content.map((c: any) => ({ ...c, data: c.data?.slice(0, 20), text: c.text?.slice(0, 160), resource: c.resource && { ...c.resource, blob: c.resource.blob?.slice(0, 20) } }))));
  const s = { ...r.structuredContent }; if (s.metadata) s.metadata = Object.keys(s.metadata); if (s.text) s.text = s.text.slice(0, 40);
  console.log(JSON.stringify(s));
  const link = r.content.find((c: any) => c.type === 'resource_link');
  if (link) { const read: any = await client.readResource({ uri: link.uri }); const c = read.contents[0]; console.log('read:', c.mimeType, c.text ? 'text ' + c.text.slice(0, 60) : 'blob ' + Buffer.from(c.blob, 'base64').subarray(0, 12).toString('latin1')); }
}
for (const uri of ['not a uri', 'http://elsewhere.example/x', `${url}/captures/00000000-0000-4000-8000-000000000000/file`]) {
  try { await client.readResource({ uri }); } catch (e: any) { console.log('readResource', uri, '->', e.code, e.message); }
}
console.log(JSON.stringify(await client.listResourceTemplates()));
await client.close();
