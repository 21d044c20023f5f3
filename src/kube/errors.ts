/**
 * Kubernetes API errors as values. KubeClient's ApiError carries the response body as raw text
 * (a JSON `Status` when the API server wrote it, plain text when a proxy or an unknown path
 * answered), and watch failures carry only a status code; this turns all of them into one shape
 * so callers can ask "was it NotFound?" without parsing anything.
 */
import { isRecord } from '../util/record.js';
import { ApiError } from './client.js';

/** The `reason` values of metav1.Status that Bosun reacts to. */
export const StatusReason = {
  NotFound: 'NotFound',
  AlreadyExists: 'AlreadyExists',
  Conflict: 'Conflict',
  Invalid: 'Invalid',
  Forbidden: 'Forbidden',
  Unauthorized: 'Unauthorized',
  Gone: 'Gone',
  Expired: 'Expired',
  BadRequest: 'BadRequest',
  MethodNotAllowed: 'MethodNotAllowed',
  NotAcceptable: 'NotAcceptable',
  UnsupportedMediaType: 'UnsupportedMediaType',
  TooManyRequests: 'TooManyRequests',
  InternalError: 'InternalError',
  ServiceUnavailable: 'ServiceUnavailable',
  Timeout: 'Timeout',
  Unknown: 'Unknown',
} as const;
export type StatusReason = (typeof StatusReason)[keyof typeof StatusReason];

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface KubeError {
  /** The HTTP status code. */
  code: number;
  reason: StatusReason | (string & {});
  message: string;
  /** For Invalid: which fields failed and why. */
  causes?: StatusCause[];
}

/** What the API server means by each status code when the body does not say. */
const reasonByCode: Record<number, StatusReason> = {
  400: StatusReason.BadRequest,
  401: StatusReason.Unauthorized,
  403: StatusReason.Forbidden,
  404: StatusReason.NotFound,
  405: StatusReason.MethodNotAllowed,
  406: StatusReason.NotAcceptable,
  409: StatusReason.Conflict,
  410: StatusReason.Gone,
  415: StatusReason.UnsupportedMediaType,
  422: StatusReason.Invalid,
  429: StatusReason.TooManyRequests,
  500: StatusReason.InternalError,
  503: StatusReason.ServiceUnavailable,
  504: StatusReason.Timeout,
};

/**
 * Reads a metav1.Status (from an error body or a watch ERROR event). Returns undefined for
 * anything that is not one.
 */
export function fromStatus(status: unknown, fallbackCode?: number): KubeError | undefined {
  if (!isRecord(status) || status.kind !== 'Status') return undefined;
  const code = typeof status.code === 'number' ? status.code : (fallbackCode ?? 0);
  const reason =
    typeof status.reason === 'string' && status.reason !== ''
      ? status.reason
      : (reasonByCode[code] ?? StatusReason.Unknown);
  const message = typeof status.message === 'string' ? status.message : '';
  const error: KubeError = { code, reason, message };
  const details = status.details;
  if (isRecord(details) && Array.isArray(details.causes)) {
    error.causes = details.causes.filter(isRecord).map((c) => ({
      ...(typeof c.reason === 'string' ? { reason: c.reason } : {}),
      ...(typeof c.message === 'string' ? { message: c.message } : {}),
      ...(typeof c.field === 'string' ? { field: c.field } : {}),
    }));
  }
  return error;
}

function parseBody(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/**
 * The API error inside `err`: an ApiError (`code` and a raw `body`), an error from a watch
 * (`statusCode`), or a Status object. Returns undefined for errors that did not come from the
 * API server (network failures, bugs), which callers should treat as retryable I/O or rethrow.
 */
export function parseApiError(err: unknown): KubeError | undefined {
  if (!isRecord(err) && !(err instanceof Error)) return undefined;
  const e = err as Record<string, unknown>;
  const direct = fromStatus(e);
  if (direct) return direct;
  const code =
    typeof e.code === 'number' ? e.code : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (code === undefined || code < 400) return undefined;
  const body = parseBody(e.body);
  const fromBody = fromStatus(body, code);
  if (fromBody) return { ...fromBody, code };
  const text = typeof body === 'string' ? body.trim() : '';
  // An ApiError's own message is only its status line; other errors carry a status text.
  const ownMessage = !(err instanceof ApiError) && typeof e.message === 'string' ? e.message : '';
  const message = text !== '' ? text : ownMessage !== '' ? ownMessage : `HTTP ${code}`;
  return { code, reason: reasonByCode[code] ?? StatusReason.Unknown, message };
}

function hasReason(err: unknown, ...reasons: string[]): boolean {
  const parsed = parseApiError(err);
  return parsed !== undefined && reasons.includes(parsed.reason);
}

export const isNotFound = (err: unknown): boolean => hasReason(err, StatusReason.NotFound);
export const isAlreadyExists = (err: unknown): boolean => hasReason(err, StatusReason.AlreadyExists);
export const isConflict = (err: unknown): boolean => hasReason(err, StatusReason.Conflict);
export const isInvalid = (err: unknown): boolean => hasReason(err, StatusReason.Invalid);
export const isForbidden = (err: unknown): boolean => hasReason(err, StatusReason.Forbidden);
/** The resourceVersion asked for is too old: relist. The API server says Expired or Gone (410). */
export const isGone = (err: unknown): boolean =>
  hasReason(err, StatusReason.Gone, StatusReason.Expired) || parseApiError(err)?.code === 410;

/**
 * The API server refused to create something because its namespace is being deleted. Nothing
 * written there can succeed again, and the namespace's deletion removes the object being
 * reconciled too, which brings its own event.
 */
export function isNamespaceTerminating(err: unknown): boolean {
  const parsed = parseApiError(err);
  return (
    parsed?.reason === StatusReason.Forbidden &&
    (parsed.causes ?? []).some((c) => c.reason === 'NamespaceTerminating')
  );
}

/**
 * A refusal that retrying cannot fix: a bad request, a forbidden or invalid object, or an object
 * that does not fit its schema. Server-side apply reports the last as a 500 ("field not declared
 * in schema") rather than a 422, so the message decides there.
 */
export function isPermanentRejection(err: KubeError): boolean {
  if ([400, 403, 422].includes(err.code)) return true;
  return err.code === 500 && /field not declared in schema/.test(err.message);
}

/** One line for logs and conditions: `Invalid (422): spec.x: Required value`. */
export function formatApiError(err: KubeError): string {
  const causes = (err.causes ?? [])
    .map((c) => [c.field, c.message].filter(Boolean).join(': '))
    .filter((s) => s !== '' && !err.message.includes(s));
  const message = [err.message, ...causes].filter((s) => s !== '').join('; ');
  return `${err.reason} (${err.code})${message === '' ? '' : `: ${message}`}`;
}

/**
 * For a request the API server refused for who made it (401 Unauthorized, 403 Forbidden): one
 * line with the API server's own words, which name the user, the verb, the resource, its group
 * and the namespace, so whoever reads it knows which permission is missing. Undefined for any
 * other error.
 */
export function accessRefusal(err: unknown): string | undefined {
  const parsed = parseApiError(err);
  if (parsed === undefined || (parsed.code !== 401 && parsed.code !== 403)) return undefined;
  return `the Kubernetes API server refused a request: ${formatApiError(parsed)}`;
}
