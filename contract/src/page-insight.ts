import { z } from 'zod';
import { withOpenApi } from './openapi-meta.js';
import { booleanParam } from './params.js';

/**
 * Page insight (docs/page-insight.md): the page's metadata (`metadata=true` → `data.metadata`), its
 * content as files (`format=html|markdown|text|mhtml`), a quality report on every capture
 * (`data.quality`, X-Capture-Quality) and AI answers in the caller's JSON shape (`openaiSchema`).
 */

/** Formats that are the page's content rather than a picture of it. */
export const CONTENT_FORMATS = ['html', 'markdown', 'text', 'mhtml'] as const;
export type ContentFormat = (typeof CONTENT_FORMATS)[number];

export const CONTENT_MIME_TYPES: Record<ContentFormat, string> = {
  html: 'text/html',
  markdown: 'text/markdown',
  text: 'text/plain',
  // RFC 2557: an MHTML archive is a multipart/related message.
  mhtml: 'multipart/related',
};

export function isContentFormat(format: string): format is ContentFormat {
  return (CONTENT_FORMATS as readonly string[]).includes(format);
}

export const QUALITY_CHECKS = ['blank', 'imagesNotLoaded', 'overlay', 'fontsFailed', 'stillGrowing'] as const;
export type QualityCheck = (typeof QUALITY_CHECKS)[number];

/** How the browser went on from one address of a redirect chain to the next (metadata `redirects[].via`). */
export const REDIRECT_VIAS = ['http', 'script', 'metaRefresh', 'refreshHeader', 'form', 'link', 'other'] as const;
export type RedirectVia = (typeof REDIRECT_VIAS)[number];

export const INSIGHT_LIMITS = {
  /** Characters of `openaiSchema`. */
  openaiSchemaMaxLength: 20_000,
  /**
   * Characters of all the different openaiSchemas of one request (a bulk's items together; the same
   * schema repeated counts once): each is compiled before anything is queued, and this bounds that work.
   */
  openaiSchemaRequestMaxLength: 40_000,
  /** Bytes of an html, markdown or text file; past it the file is cut at a character boundary and X-Capture-Truncated says so. */
  contentMaxBytes: 5 * 1024 * 1024,
  /** Bytes of an mhtml archive (it cannot be cut): past it the capture fails with CONTENT_TOO_LARGE. */
  mhtmlMaxBytes: 50 * 1024 * 1024,
  /** Entries listed in metadata lists (console errors, failed requests, redirects, fonts). */
  listedEntries: 10,
  /** Icons listed in metadata: every one a page declares up to this many, largest first. */
  iconEntries: 50,
  /** Authors named in metadata.authors. */
  authorEntries: 20,
  /** Share of the viewport a fixed or sticky element may cover before `overlay` is reported. */
  overlayShare: 0.3,
} as const;

function parseJsonSchema(value: string, ctx: z.RefinementCtx): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: 'openaiSchema must be a JSON Schema written as a JSON string (it is not valid JSON)',
    });
    return z.NEVER;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed) || (parsed as { type?: unknown }).type !== 'object') {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: 'openaiSchema must be a JSON Schema object whose root has "type": "object" (structured outputs answer with an object)',
    });
    return z.NEVER;
  }
  return value;
}

export const pageInsightFields = {
  metadata: booleanParam(
    'metadata',
    false,
    "true: the page's metadata in data.metadata (JSON mode and async results): title, articleTitle, author, authors, publishedAt, modifiedAt, description, canonicalUrl, language, openGraph, twitter, icons, fonts used to render, httpStatus, httpHeaders (cookies removed), redirects, consoleErrors, failedRequests, timings and the sha256 of the file; binary mode gets X-Capture-Sha256, X-Page-Title and X-Page-Language.",
  ),
  failOnBlank: booleanParam(
    'failOnBlank',
    false,
    'true: a blank (single-colour or empty) capture fails with 422 CAPTURE_BLANK and nothing is charged.',
  ),
  openaiSchema: z
    .string({ errorMap: () => ({ message: 'openaiSchema must be a string' }) })
    .min(1, 'openaiSchema must not be empty')
    .max(INSIGHT_LIMITS.openaiSchemaMaxLength, `openaiSchema must be at most ${INSIGHT_LIMITS.openaiSchemaMaxLength} characters`)
    .superRefine((value, ctx) => void parseJsonSchema(value, ctx))
    .optional()
    .describe(
      'A JSON Schema (as a JSON string, root "type": "object") for the AI answer: sent to the model as a structured output, the answer is validated against it and returned parsed as data.aiResult. Needs openaiPrompt and a provider key. An answer that does not match fails with AI_RESULT_INVALID (nothing charged).',
    ),
};

const namedEntries = (what: string) => z.array(z.object({ message: z.string() }).passthrough()).describe(what);

export const PageMetadataSchema = withOpenApi(
  z.object({
    title: z.string().describe('document.title'),
    // The article's own fields sit beside the page's: title stays document.title (site suffix and
    // all) as it always was; the *At names follow the contract's ISO 8601 times (createdAt, finishedAt).
    articleTitle: z
      .string()
      .nullable()
      .describe(
        'The article\'s own headline: the <h1> that the declared titles (og:title, JSON-LD headline, twitter:title) agree with, else a rendered <h1> in the article, else the first declared title or document.title without the site\'s name (" | Site", "Site - "); null when the page has none of them',
      ),
    author: z
      .string()
      .nullable()
      .describe(
        'The byline without "By": from JSON-LD, <meta name="author">, article:author and the like, or microdata when the byline a reader sees names the same people, else that visible byline; several names joined as a byline reads ("Ann Lee, Bo Chan and Cy Diaz"); null when the page names no author',
      ),
    authors: z
      .array(z.string())
      .describe(`The names in author, one per person (at most ${INSIGHT_LIMITS.authorEntries}); empty when author is null`),
    publishedAt: z
      .string()
      .nullable()
      .describe(
        'When the article was published, ISO 8601 in UTC (2016-09-19T15:46:01.000Z): JSON-LD datePublished, article:published_time and the like, microdata, or the <time> by the headline, the most precise of them; a time written without a zone is read as UTC (+09:00 on Japanese and Korean pages, +08:00 on Chinese ones), a date without a time as midnight there; null when the page gives none',
      ),
    modifiedAt: z
      .string()
      .nullable()
      .describe(
        'When the article was last changed, as publishedAt: JSON-LD dateModified, article:modified_time, og:updated_time, microdata; null when the page gives none',
      ),
    description: z.string().nullable().describe('<meta name="description">, else og:description, else twitter:description'),
    canonicalUrl: z.string().nullable().describe('<link rel="canonical"> resolved against the document URL'),
    language: z.string().nullable().describe('The lang attribute of <html> (else Content-Language)'),
    openGraph: z.record(z.string()).describe('og:* properties without the prefix (title, description, image, url, type, site_name, …)'),
    twitter: z.record(z.string()).describe('twitter:* cards without the prefix (card, title, description, image, site, …)'),
    icons: z
      .array(z.object({ rel: z.string(), href: z.string(), sizes: z.string().nullable(), type: z.string().nullable() }))
      .describe(
        `Every <link rel="icon|shortcut icon|apple-touch-icon|apple-touch-icon-precomposed|mask-icon"> resolved to an absolute URL (at most ${INSIGHT_LIMITS.iconEntries}), largest first by its declared sizes: sizes="any" (scalable) first, then the largest of its sizes, then icons that declare no size, in page order`,
      ),
    fonts: z
      .array(
        z.object({
          family: z.string().describe('Font family name as Chromium reports it'),
          glyphs: z.number().int().describe('Glyphs drawn with it in the sampled text'),
          webFont: z.boolean().describe('Loaded from the page (not installed on the server)'),
        }),
      )
      .describe('Fonts Chromium actually used to draw the text (CSS.getPlatformFontsForNode), most glyphs first'),
    httpStatus: z.number().int().nullable().describe('HTTP status of the main document; null for inline html'),
    httpHeaders: z.record(z.string()).describe('Response headers of the main document, lower-case names, Set-Cookie removed'),
    redirects: z
      .array(
        z.object({
          url: z.string(),
          status: z.number().int(),
          via: z
            .enum(REDIRECT_VIAS)
            .describe(
              'How the browser went on from this address: http (a 3xx answer), script (a script set the location), metaRefresh (<meta http-equiv=refresh>), refreshHeader (the HTTP Refresh header), form (a submitted form), link (a followed link), other',
            ),
        }),
      )
      .describe(
        'Every address before the final document, in order: HTTP redirects and the navigations the pages started by themselves after loading',
      ),
    consoleErrors: z.object({ count: z.number().int(), first: namedEntries('The first console errors and uncaught exceptions') }),
    failedRequests: z.object({
      count: z.number().int(),
      first: z
        .array(z.object({ url: z.string(), resourceType: z.string(), reason: z.string() }))
        .describe('The first requests that failed (network error or HTTP 4xx/5xx)'),
    }),
    timings: z
      .object({
        navigation: z.number().int().describe('ms from navigation start to the response'),
        load: z.number().int().nullable().describe('ms from navigation start to the end of the load event (Navigation Timing)'),
        wait: z.number().int().describe('ms spent in the waits and cleanup after navigation'),
        capture: z.number().int().describe('ms spent taking the file'),
      })
      .describe('Where the time went'),
    sha256: z.string().describe('Lowercase hex sha256 of the output file'),
  }),
  { title: 'PageMetadata' },
);
export type PageMetadata = z.infer<typeof PageMetadataSchema>;

export const QualityFindingSchema = withOpenApi(
  z
    .object({
      check: z.enum(QUALITY_CHECKS).describe('Which check found it'),
      message: z.string().describe('What was found and where'),
    })
    .passthrough(),
  { title: 'QualityFinding' },
);
export type QualityFinding = z.infer<typeof QualityFindingSchema>;

export const CaptureQualitySchema = withOpenApi(
  z.object({
    ok: z.boolean().describe('True when no check found anything (X-Capture-Quality: ok, else warn)'),
    findings: z
      .array(QualityFindingSchema)
      .describe('blank, imagesNotLoaded, overlay, fontsFailed, stillGrowing: each with what and where'),
  }),
  { title: 'CaptureQuality' },
);
export type CaptureQuality = z.infer<typeof CaptureQualitySchema>;
