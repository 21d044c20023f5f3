/**
 * Package descriptions (a CSV's `spec.description`, Markdown with HTML allowed) rendered for the
 * web catalog. A catalog is input from anyone who publishes one, so nothing in it may run in the
 * page: the Markdown is rendered by `marked` and the HTML that comes out is passed through
 * `sanitize-html` with an allow-list of tags and attributes. No script, style, frame, form or
 * event-handler attribute survives; links keep only absolute http, https and mailto URLs;
 * images only inline `data:image/*` ones (a remote image would tell its host who reads the page,
 * so it becomes a link to the image). The page's Content-Security-Policy (no inline script or
 * style) stands behind this as a second wall.
 */
import { Marked } from 'marked';
import sanitizeHtml from 'sanitize-html';

/** Longer descriptions are cut here (at a line end where there is one) before rendering. */
export const MaxDescriptionChars = 100_000;

/** Deeper nesting is flattened: nothing legitimate nests this far, and a deep tree costs every reader. */
const NestingLimit = 40;

const markdown = new Marked({ gfm: true, async: false });

const SafeImage = /^data:image\/(png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/=\s]+$/i;
const SafeLink = /^(https?:\/\/|mailto:)/i;

/** A heading in a description sits under the package page's own headings (h1 name, h2 sections). */
const shifted = (level: number) => `h${Math.min(6, level + 2)}`;

const options: sanitizeHtml.IOptions = {
  allowedTags: [
    ...['p', 'br', 'hr', 'blockquote', 'pre', 'code', 'kbd', 'samp', 'var'],
    ...['h3', 'h4', 'h5', 'h6', 'em', 'strong', 'b', 'i', 'u', 's', 'del', 'ins', 'sub', 'sup', 'mark'],
    ...['small', 'abbr', 'a', 'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'img', 'details', 'summary'],
    ...['table', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'caption', 'span', 'div', 'figure'],
    'figcaption',
  ],
  allowedAttributes: {
    a: ['href', 'title', 'rel', 'target'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    th: ['align', 'colspan', 'rowspan'],
    td: ['align', 'colspan', 'rowspan'],
    ol: ['start'],
    abbr: ['title'],
  },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['data'] },
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  nestingLimit: NestingLimit,
  parseStyleAttributes: false,
  transformTags: {
    h1: shifted(1),
    h2: shifted(2),
    h3: shifted(3),
    h4: shifted(4),
    a: (tagName, attribs): sanitizeHtml.Tag => {
      const href = (attribs.href ?? '').trim();
      // A relative link points into this server, where it means nothing: keep the text only.
      if (!SafeLink.test(href)) return { tagName: 'span', attribs: {} };
      return {
        tagName,
        attribs: {
          href,
          rel: 'noopener noreferrer nofollow',
          target: '_blank',
          ...(attribs.title ? { title: attribs.title } : {}),
        },
      };
    },
    img: (tagName, attribs): sanitizeHtml.Tag => {
      const src = (attribs.src ?? '').trim();
      const keep: sanitizeHtml.Attributes = {};
      for (const k of ['alt', 'title', 'width', 'height']) if (attribs[k]) keep[k] = attribs[k];
      if (SafeImage.test(src)) return { tagName, attribs: { src, ...keep } };
      if (SafeLink.test(src)) {
        return {
          tagName: 'a',
          attribs: { href: src, rel: 'noopener noreferrer nofollow', target: '_blank' },
          text: `[image${attribs.alt ? `: ${attribs.alt}` : ''}]`,
        };
      }
      return { tagName: 'span', attribs: {}, text: attribs.alt ?? '' };
    },
  },
};

export interface RenderedDescription {
  html: string;
  /** The Markdown was longer than MaxDescriptionChars and was cut. */
  truncated: boolean;
}

/** The description as safe HTML (see the module comment). */
export function renderDescription(text: string): RenderedDescription {
  let source = text;
  let truncated = false;
  if (source.length > MaxDescriptionChars) {
    const cut = source.lastIndexOf('\n', MaxDescriptionChars);
    source = source.slice(0, cut > MaxDescriptionChars / 2 ? cut : MaxDescriptionChars);
    truncated = true;
  }
  const html = markdown.parse(source) as string;
  return { html: sanitizeHtml(html, options), truncated };
}
