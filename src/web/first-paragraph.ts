/**
 * A package card's one line of text, taken from its description's Markdown without rendering it:
 * the index of the web catalog shows it for every package, and it needs neither `marked` nor
 * `sanitize-html` (markdown.ts), which a manager loads only when a package page is first served.
 */
/**
 * One line of plain text from Markdown, for a card: the first paragraph without markup. It is
 * shown as text (never parsed as HTML), so this is about looks, not safety.
 */
export function firstParagraph(text: string, max = 280): string {
  const para =
    text
      .replace(/\r\n?/g, '\n')
      .split(/\n\s*\n/)
      .map((p) => p.trim())
      .find((p) => p && !/^(#|!\[|<img|\||```|---)/i.test(p)) ?? '';
  const plain = para
    .replace(/<[^>]*>/g, '')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_`~]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return plain.length > max ? `${plain.slice(0, max - 1).trimEnd()}…` : plain;
}
