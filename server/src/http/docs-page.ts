import type { SwaggerUiOptions } from 'swagger-ui-express';

/**
 * Swagger UI renders a response as text unless it is an image, octet-stream or marked as a file
 * (`Content-Disposition: attachment` or `Content-Description: File Transfer`). A pdf is sent
 * `inline` (the API's documented Content-Disposition), so /docs showed its bytes as text. This
 * interceptor, run in the browser, marks a pdf answer as a file for Swagger UI only: it then offers
 * a download.
 */
function markPdfAsFile(response: { headers?: Record<string, string> }) {
  const headers = response.headers ?? {};
  if (/^application\/pdf/i.test(headers['content-type'] ?? '')) headers['content-description'] = 'File Transfer';
  return response;
}

export function docsPageOptions(): SwaggerUiOptions {
  return {
    customSiteTitle: 'Daguerre API',
    // swagger-ui-express writes functions into the page's init script as source.
    swaggerOptions: { responseInterceptor: markPdfAsFile },
  };
}
