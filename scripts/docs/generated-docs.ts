import { readFileSync } from 'node:fs';
import type { OpenAPIObject } from 'openapi3-ts';
import { buildOpenApiDocument } from '../openapi-document.js';
import { renderApiReference } from './api-reference.js';
import { renderConfigurationReference } from './configuration-reference.js';
import { withClientOptions } from './client-options.js';

export interface GeneratedPage {
  /** Path from the project root. */
  path: string;
  text: string;
}

/** Every page of docs/ that is generated rather than written. */
export function generatedDocs(): GeneratedPage[] {
  const document = JSON.parse(JSON.stringify(buildOpenApiDocument())) as OpenAPIObject;
  return [
    { path: 'docs/reference/api.md', text: renderApiReference(document) },
    { path: 'docs/reference/configuration.md', text: renderConfigurationReference() },
    {
      path: 'client/README.md',
      text: withClientOptions(readFileSync(new URL('../../client/README.md', import.meta.url), 'utf8'), document),
    },
  ];
}
