/**
 * How a catalog's icons are served, by the web catalog (`/api/icons/...`) and by the PackageManifest
 * API (`.../packagemanifests/<name>/icon`): the media type a CSV names is the author's word, and a
 * response opened on its own runs in the origin that serves it (the API server's, through
 * `kubectl proxy` or a console, with whatever credentials that origin holds). So:
 * - only image types an `<img>` shows are served as what they say; anything else (`text/html`,
 *   `application/javascript`, `image/svg` misspelt) is an `application/octet-stream` download
 *   (`Content-Disposition: attachment`);
 * - every icon carries `X-Content-Type-Options: nosniff`, so no browser reads it as another type,
 *   and a Content-Security-Policy that sandboxes it and allows nothing but inline style, so an SVG
 *   opened as a document runs none of its scripts and loads nothing.
 */

/** The icon types an `<img>` shows; anything else is served as a download. */
export const IconTypes: readonly string[] = [
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/svg+xml',
  'image/webp',
];

/** What an SVG opened as a document may do: apply its own inline style, and nothing else. */
export const IconPolicy = "sandbox; default-src 'none'; style-src 'unsafe-inline'";

/** A CSV's `mediatype` as a bare lower-case type (`IMAGE/PNG ; x=y` is `image/png`). */
export function iconMediaType(declared: string | undefined): string {
  return (declared ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Whether an icon of this declared type is served as the image it says it is. */
export const isServedImage = (declared: string | undefined): boolean =>
  IconTypes.includes(iconMediaType(declared));

/** The headers of an icon response whose CSV named `declared` as its type. */
export function iconHeaders(declared: string | undefined): Record<string, string> {
  const type = iconMediaType(declared);
  const image = IconTypes.includes(type);
  return {
    'Content-Type': image ? type : 'application/octet-stream',
    'Content-Disposition': image ? 'inline' : 'attachment; filename="icon"',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': IconPolicy,
  };
}
