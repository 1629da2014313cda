import type { Param } from './request-params.js';

/**
 * The request as code a person can copy: curl and the typed client (@daguerre/client). Both read
 * the key from DAGUERRE_API_KEY, so it does not end up in a shell history or a source file.
 */

export function curlSnippet(list: Param[], format: string, origin: string): string {
  const lines = ['curl -G ' + shellQuote(origin + '/capture'), '  -H "X-API-Key: $DAGUERRE_API_KEY"'];
  list.forEach(([name, raw]) => {
    const value = String(raw);
    const plain = /^[\w.:-]*$/.test(value);
    lines.push(plain ? '  -d ' + name + '=' + value : '  --data-urlencode ' + shellQuote(name + '=' + value));
  });
  lines.push('  -o capture.' + fileExtension(format));
  return lines.join(' \\\n');
}

export function tsSnippet(list: Param[], origin: string): string {
  const body = list
    .map(([name, value]) => '  ' + name + ': ' + (typeof value === 'string' ? JSON.stringify(value) : String(value)) + ',')
    .join('\n');
  return [
    "import { writeFile } from 'node:fs/promises';",
    "import { createClient } from '@daguerre/client';",
    '',
    'const client = createClient({',
    '  baseUrl: ' + JSON.stringify(origin) + ',',
    '  apiKey: process.env.DAGUERRE_API_KEY!,',
    '});',
    '',
    'const file = await client.capture({',
    body,
    '});',
    'await writeFile(file.fileName, file.bytes);',
  ].join('\n');
}

/** The extension the service gives a format's file (jpeg files end in .jpg). */
export function fileExtension(format: string): string {
  return format === 'jpeg' ? 'jpg' : format;
}

function shellQuote(text: string): string {
  return "'" + text.replace(/'/g, "'\\''") + "'";
}
