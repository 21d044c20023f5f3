/**
 * Label and field selectors as the API server reads them from `?labelSelector=` and
 * `?fieldSelector=` (apimachinery `labels.Parse` and `fields.ParseSelector`):
 *
 * - labels: comma-separated requirements, each `key`, `!key`, `key=value`, `key==value`,
 *   `key!=value`, `key in (v1,v2)` or `key notin (v1,v2)`; all must hold. `!=` and `notin` hold
 *   for an object without the label.
 * - fields: comma-separated `field=value`, `field==value` or `field!=value`, over the fields a
 *   resource supports (`metadata.name` and `metadata.namespace` here).
 *
 * Parsing is pure and returns a message naming the part it cannot read, for a 400 Bad Request.
 */
import type { Result } from '../util/result.js';

export type LabelRequirement =
  { key: string; op: 'exists' | 'absent' } | { key: string; op: 'in' | 'notin'; values: string[] };

export type Matcher = (labels: Readonly<Record<string, string>> | undefined) => boolean;

const keyPattern =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** A label value: at most 63 characters, alphanumeric at both ends, `-`, `_` and `.` between. */
const valuePattern = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

function bad(message: string): Result<never> {
  return { ok: false, errors: [{ message }] };
}

/** Splits on commas outside parentheses. */
function splitTop(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out;
}

export function parseLabelSelector(text: string): Result<LabelRequirement[]> {
  const reqs: LabelRequirement[] = [];
  if (text.trim() === '') return { ok: true, value: reqs };
  for (const raw of splitTop(text)) {
    const part = raw.trim();
    const setMatch = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(part);
    let req: LabelRequirement;
    if (setMatch) {
      const values = setMatch[3]!.split(',').map((v) => v.trim());
      req = { key: setMatch[1]!, op: setMatch[2] as 'in' | 'notin', values };
    } else if (part.startsWith('!')) {
      req = { key: part.slice(1).trim(), op: 'absent' };
    } else {
      const eq = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
      if (eq) {
        req = { key: eq[1]!, op: eq[2] === '!=' ? 'notin' : 'in', values: [eq[3]!.trim()] };
      } else if (/^[^\s=!(),]+$/.test(part)) {
        req = { key: part, op: 'exists' };
      } else {
        return bad(
          `labelSelector: cannot read "${part}": expected key, !key, key=value, key!=value, key in (…) or key notin (…)`,
        );
      }
    }
    if (!keyPattern.test(req.key) || req.key.length > 317)
      return bad(`labelSelector: "${req.key}" is not a valid label key`);
    const badValue = 'values' in req ? req.values.find((v) => !valuePattern.test(v)) : undefined;
    if (badValue !== undefined) return bad(`labelSelector: "${badValue}" is not a valid label value`);
    reqs.push(req);
  }
  return { ok: true, value: reqs };
}

export function labelMatcher(reqs: readonly LabelRequirement[]): Matcher {
  return (labels) =>
    reqs.every((r) => {
      const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
      switch (r.op) {
        case 'exists':
          return has;
        case 'absent':
          return !has;
        case 'in':
          return has && r.values.includes(labels[r.key]!);
        case 'notin':
          return !has || !r.values.includes(labels[r.key]!);
      }
    });
}

export interface FieldRequirement {
  field: string;
  equal: boolean;
  value: string;
}

/** Parses a field selector over the fields `supported` allows; anything else is refused by name. */
export function parseFieldSelector(text: string, supported: readonly string[]): Result<FieldRequirement[]> {
  const reqs: FieldRequirement[] = [];
  if (text.trim() === '') return { ok: true, value: reqs };
  for (const raw of text.split(',')) {
    const m = /^\s*([^=!\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(raw);
    if (!m) return bad(`fieldSelector: cannot read "${raw.trim()}": expected field=value or field!=value`);
    if (!supported.includes(m[1]!))
      return bad(`fieldSelector: field label not supported: ${m[1]} (supported: ${supported.join(', ')})`);
    reqs.push({ field: m[1]!, equal: m[2] !== '!=', value: m[3]! });
  }
  return { ok: true, value: reqs };
}

export function fieldsMatch(
  reqs: readonly FieldRequirement[],
  fields: Readonly<Record<string, string>>,
): boolean {
  return reqs.every((r) => (fields[r.field] === r.value) === r.equal);
}
