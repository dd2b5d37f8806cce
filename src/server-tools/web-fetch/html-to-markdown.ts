/**
 * HTML page → readable markdown of its main content: linkedom builds the DOM, Mozilla's
 * Readability (Firefox Reader View) picks the main content and drops navigation, headers, footers,
 * sidebars and ads, turndown writes markdown. Links and images are made absolute against the page's
 * final URL (or its `<base href>`), because the model reads the text without the page around it.
 * Nothing here loads a resource: linkedom runs no scripts and fetches no subresources.
 *
 * CPU grows with the page (seconds for a page of megabytes), so web_fetch runs this
 * in a worker thread (html-conversion-pool.ts), never on the request thread.
 */
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";

export interface PageMarkdown {
  /** The page title (Readability's cleaned title, else `<title>`), or null. */
  title: string | null;
  markdown: string;
  /** Whether Readability found the main content (false: the whole body was converted). */
  readable: boolean;
}

/** Elements never worth text, removed before the whole-body fallback is converted. */
const CHROME_SELECTOR =
  "script,style,noscript,template,iframe,svg,canvas,form,button,input,select,textarea,object,embed," +
  "nav,header,footer,aside,[role=navigation],[role=banner],[role=contentinfo],[aria-hidden=true]";

/** Site chrome: navigation anywhere, and page-level headers, footers and sidebars. */
const NAVIGATION_SELECTOR = "nav,[role=navigation]";
const PAGE_CHROME_SELECTOR = "header,footer,aside,[role=banner],[role=contentinfo],[role=complementary]";
/** Inside these, a header, footer or aside belongs to the content (a byline, a note). */
const CONTENT_SELECTOR = "article,main,[role=main]";

const MAX_TITLE_LENGTH = 300;

// Minimal DOM shapes used here: linkedom's types are not the lib.dom ones this project compiles without.
interface DomElement {
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  remove(): void;
  querySelectorAll(selector: string): Iterable<DomElement>;
  querySelector(selector: string): DomElement | null;
  closest(selector: string): DomElement | null;
  parentElement: DomElement | null;
  textContent: string | null;
}

export function convertHtmlToMarkdown(html: string, pageUrl: string): PageMarkdown {
  html = completeDocumentShape(html);
  const { document } = parseHTML(html) as unknown as { document: DomElement & { title?: string } };
  const documentTitle = cleanTitle(document.title ?? document.querySelector("title")?.textContent ?? null);
  absolutizeLinks(document, baseUrlOf(document, pageUrl), pageUrl);
  // Readability drops chrome on pages with a clear article, but keeps all of a short page.
  removeSiteChrome(document);

  let article: ReturnType<Readability<DomElement>["parse"]> = null;
  try {
    article = new Readability<DomElement>(document as never, { serializer: (node) => node as never }).parse();
  } catch {
    // A document Readability cannot handle still has a body worth converting.
  }
  if (article?.content) {
    return {
      title: cleanTitle(article.title ?? null) ?? documentTitle,
      markdown: toMarkdown(article.content),
      readable: true,
    };
  }
  // Readability changes the document while it searches; convert a fresh one.
  const { document: fresh } = parseHTML(html) as unknown as { document: DomElement & { body?: DomElement } };
  absolutizeLinks(fresh, baseUrlOf(fresh, pageUrl), pageUrl);
  const body = fresh.body ?? fresh;
  for (const element of [...body.querySelectorAll(CHROME_SELECTOR)]) element.remove();
  return { title: documentTitle, markdown: toMarkdown(body), readable: false };
}

/**
 * linkedom builds the tree as written and does not add the `<html>`, `<head>` and `<body>` a page
 * may leave out (valid HTML): without a body, Readability and the fallback find nothing. Such a
 * page is wrapped, its `<title>` copied into a head.
 */
export function completeDocumentShape(html: string): string {
  const hasBody = /<body[\s>]/i.test(html);
  const hasHtml = /<html[\s>]/i.test(html);
  if (hasBody && hasHtml) return html;
  if (hasBody) return `<html>${html}</html>`;
  const headEnd = hasHtml ? html.search(/<\/head\s*>/i) : -1;
  if (headEnd !== -1) {
    const after = html.indexOf(">", headEnd) + 1;
    return `${html.slice(0, after)}<body>${html.slice(after)}</body>`;
  }
  // Only the start is searched: a title comes first, and the search stays short on any page.
  const title = /<title[^>]*>[^<]*<\/title\s*>/i.exec(html.slice(0, 65_536))?.[0] ?? "";
  return `<!doctype html><html><head>${title}</head><body>${html}</body></html>`;
}

function removeSiteChrome(document: DomElement): void {
  for (const element of [...document.querySelectorAll(NAVIGATION_SELECTOR)]) element.remove();
  for (const element of [...document.querySelectorAll(PAGE_CHROME_SELECTOR)]) {
    if (element.parentElement?.closest(CONTENT_SELECTOR) == null) element.remove();
  }
}

/** The `<base href>` when it is an http(s) URL, else the page URL. */
function baseUrlOf(document: DomElement, pageUrl: string): URL {
  const href = document.querySelector("base[href]")?.getAttribute("href");
  const page = new URL(pageUrl);
  if (!href) return page;
  const base = parseUrl(href, page);
  return base !== null && (base.protocol === "http:" || base.protocol === "https:") ? base : page;
}

/**
 * Rewrites `a[href]` and `img[src]` to absolute http(s) URLs. Links elsewhere (`javascript:`,
 * `data:`) lose their target and keep their text; links to a spot on the same page become text;
 * images without an http(s) source are removed.
 */
function absolutizeLinks(document: DomElement, base: URL, pageUrl: string): void {
  const page = new URL(pageUrl);
  page.hash = "";
  for (const link of document.querySelectorAll("a[href]")) {
    const target = parseUrl(link.getAttribute("href") ?? "", base);
    if (target === null || !isWebOrMail(target)) {
      link.removeAttribute("href");
      continue;
    }
    if (target.hash !== "" && withoutHash(target) === page.href) {
      link.removeAttribute("href");
      continue;
    }
    link.setAttribute("href", target.href);
  }
  for (const image of document.querySelectorAll("img")) {
    const target = parseUrl(image.getAttribute("src") ?? "", base);
    if (target === null || (target.protocol !== "http:" && target.protocol !== "https:")) {
      image.remove();
      continue;
    }
    image.setAttribute("src", target.href);
    image.removeAttribute("srcset");
  }
}

/** `URL.parse` arrived in Node 22. */
function parseUrl(input: string, base: URL): URL | null {
  try {
    return new URL(input, base);
  } catch {
    return null;
  }
}

function isWebOrMail(url: URL): boolean {
  return url.protocol === "http:" || url.protocol === "https:" || url.protocol === "mailto:";
}

function withoutHash(url: URL): string {
  const copy = new URL(url.href);
  copy.hash = "";
  return copy.href;
}

function cleanTitle(title: string | null): string | null {
  const text = title?.replace(/\s+/g, " ").trim();
  if (!text) return null;
  return text.length > MAX_TITLE_LENGTH ? `${text.slice(0, MAX_TITLE_LENGTH)}…` : text;
}

let turndown: TurndownService | undefined;

function toMarkdown(root: DomElement): string {
  turndown ??= createTurndown();
  return turndown
    .turndown(root as never)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

function createTurndown(): TurndownService {
  const service = new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    hr: "---",
  });
  service.remove(["script", "style", "noscript", "template", "iframe", "svg", "canvas", "form", "button"]);
  service.remove(["input", "select", "textarea", "object", "embed", "title", "meta", "link", "base", "head"]);
  // An image is worth its alt text and address; one without alt text is decoration.
  service.addRule("imagesWithAlt", {
    filter: "img",
    replacement: (_content, node) => {
      const image = node as unknown as DomElement;
      const alt = (image.getAttribute("alt") ?? "").replace(/\s+/g, " ").trim();
      const src = image.getAttribute("src");
      return alt && src ? `![${alt.replace(/[[\]]/g, "")}](${src})` : "";
    },
  });
  return service;
}
