/**
 * The JSON-LD a page declares (schema.org), read just far enough for the article's metadata: every
 * node of every script (arrays, `@graph` and nested objects flattened), and the node that
 * describes the article itself.
 */
export type JsonLdNode = Record<string, unknown>;

/** A script's text as JSON: some pages wrap it in HTML comments or CDATA, or leave raw newlines in strings. */
function parseScript(text: string): unknown {
  const unwrapped = text
    .trim()
    .replace(/^(?:<!--|\/\/\s*<!\[CDATA\[|\/\*\s*<!\[CDATA\[\s*\*\/)\s*/, '')
    .replace(/\s*(?:-->|\/\/\s*\]\]>|\/\*\s*\]\]>\s*\*\/)$/, '');
  try {
    return JSON.parse(unwrapped);
  } catch {
    try {
      // eslint-disable-next-line no-control-regex -- raw control characters inside strings are what breaks such JSON
      return JSON.parse(unwrapped.replace(/[\u0000-\u001f]+/g, ' '));
    } catch {
      return undefined;
    }
  }
}

/** How deep in its script each node was: a list of other articles nests theirs deeper than the page's own. */
const depths = new WeakMap<JsonLdNode, number>();

/** Every object with a `@type` or an `@id`, depth first, in document order. */
export function jsonLdNodes(scripts: string[]): JsonLdNode[] {
  const nodes: JsonLdNode[] = [];
  const visit = (value: unknown, depth: number) => {
    if (depth > 8 || nodes.length > 500) return;
    if (Array.isArray(value)) return value.forEach((item) => visit(item, depth + 1));
    if (!value || typeof value !== 'object') return;
    const node = value as JsonLdNode;
    if ('@type' in node || '@id' in node) {
      nodes.push(node);
      depths.set(node, depth);
    }
    for (const [key, child] of Object.entries(node)) if (key !== '@context') visit(child, depth + 1);
  };
  for (const script of scripts) visit(parseScript(script), 0);
  return nodes;
}

export function typesOf(node: JsonLdNode): string[] {
  const type = node['@type'];
  return (Array.isArray(type) ? type : [type]).filter((t): t is string => typeof t === 'string').map((t) => t.replace(/^.*[/#:]/, ''));
}

const ARTICLE_TYPE =
  /Article$|^(?:BlogPosting|LiveBlogPosting|SocialMediaPosting|DiscussionForumPosting|Report|Review|Recipe|Thesis|Chapter)$/;
const PAGE_TYPE = /^(?:WebPage|ItemPage|AboutPage|ProfilePage|CollectionPage|MediaObject|VideoObject|CreativeWork)$/;

/**
 * The node that describes the article: the least nested Article-like node (NewsArticle,
 * BlogPosting, …) that has a headline, author or date, the first of equals; else a page or
 * creative work that has one of those.
 */
export function articleNode(found: JsonLdNode[]): JsonLdNode | null {
  const useful = (node: JsonLdNode) => 'headline' in node || 'author' in node || 'datePublished' in node;
  const nodes = [...found].sort((a, b) => (depths.get(a) ?? 0) - (depths.get(b) ?? 0));
  return (
    nodes.find((node) => typesOf(node).some((t) => ARTICLE_TYPE.test(t)) && useful(node)) ??
    nodes.find((node) => typesOf(node).some((t) => PAGE_TYPE.test(t)) && useful(node)) ??
    null
  );
}

/** A value that may be a reference (`{"@id": …}`) to another node of the page, resolved. */
export function resolveRef(value: unknown, nodes: JsonLdNode[]): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const node = value as JsonLdNode;
  const id = node['@id'];
  if (typeof id !== 'string' || Object.keys(node).some((key) => !key.startsWith('@'))) return value;
  return nodes.find((other) => other !== node && other['@id'] === id && Object.keys(other).length > 2) ?? value;
}

/** The first string of a value that may be a string, a number, an array or a `{@value}` object. */
export function textOf(value: unknown): string | null {
  if (typeof value === 'string') return value.replace(/\s+/g, ' ').trim() || null;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.map(textOf).find((text) => text) ?? null;
  if (value && typeof value === 'object' && '@value' in value) return textOf((value as JsonLdNode)['@value']);
  return null;
}
