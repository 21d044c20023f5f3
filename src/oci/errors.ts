/**
 * Errors of image transfer. Every one names where it happened (the registry, the repository or
 * image, the digest, the layer entry) so that a CatalogSource condition or a CLI line can say
 * what failed without a stack trace. They are UserErrors: the fix is on the user's side (a
 * reference, a credential, a certificate, a registry that is down or serves wrong content).
 */
import { UserError } from '../util/errors.js';

export interface OciErrorWhere {
  /** The registry host, with port: `quay.io`, `127.0.0.1:5000`. */
  registry?: string;
  repository?: string;
  /** The image as the user named it, when known. */
  image?: string;
  digest?: string;
  /** The HTTP status the registry answered, when it answered. */
  status?: number;
  /** The distribution error codes the registry gave (`MANIFEST_UNKNOWN`, `UNAUTHORIZED`, ...). */
  codes?: string[];
}

export class OciError extends UserError {
  constructor(
    message: string,
    readonly where: OciErrorWhere = {},
    options?: ErrorOptions,
  ) {
    super(message, 1, options);
    this.name = 'OciError';
  }
}

/** Content that does not match its digest or size. Nothing of it is kept. */
export class DigestMismatchError extends OciError {
  constructor(message: string, where: OciErrorWhere) {
    super(message, where);
    this.name = 'DigestMismatchError';
  }
}

/** A layer entry refused by extraction: names the image, the layer and the entry. */
export class LayerEntryError extends OciError {
  constructor(
    message: string,
    where: OciErrorWhere,
    readonly entry: string | undefined,
  ) {
    super(message, where);
    this.name = 'LayerEntryError';
  }
}

/**
 * An image index (a multi-platform image) without an image for the platform wanted. Not the
 * registry's fault, nor a broken image: the image is built for other platforms, which the
 * message lists. Its reason names that in a CatalogSource's status and in the CLI's error.
 */
export class PlatformMissingError extends OciError {
  static readonly reason = 'ImagePlatformMissing';
  constructor(
    message: string,
    where: OciErrorWhere,
    /** The platforms the index has images for (`linux/arm64`, ...). */
    readonly platforms: string[],
  ) {
    super(message, where);
    this.name = 'PlatformMissingError';
  }
}

/** The `errors[]` of a distribution error body, as `CODE: message` strings; empty when it has none. */
export function registryErrorDetails(body: string): { codes: string[]; text: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { codes: [], text: '' };
  }
  const errors = (parsed as { errors?: unknown }).errors;
  if (!Array.isArray(errors)) return { codes: [], text: '' };
  const codes: string[] = [];
  const parts: string[] = [];
  for (const e of errors.slice(0, 10)) {
    if (typeof e !== 'object' || e === null) continue;
    const { code, message } = e as { code?: unknown; message?: unknown };
    const c = typeof code === 'string' ? code.slice(0, 100) : undefined;
    const m = typeof message === 'string' ? message.slice(0, 500) : undefined;
    if (c) codes.push(c);
    if (c || m) parts.push([c, m].filter(Boolean).join(': '));
  }
  return { codes, text: parts.join('; ') };
}
