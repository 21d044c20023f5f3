/**
 * A ClusterExtension's `spec.source.catalog.selector` as v1 reads it: apimachinery's
 * LabelSelectorAsSelector, whose errors v1 reports as `desired catalog selector is invalid: ...`.
 * The API server does not check a label selector inside a custom resource, so these reach the
 * resolver. Checked here, worded as labels.NewRequirement words them: each key (a qualified
 * name), the operator, the values each operator needs, and each value (a label value). The
 * patterns are checked by hand, a character class and the two ends, so the time is linear in the
 * length whatever the input, as with Go's regexp engine: a key or value in a custom resource has
 * no length limit short of the object's.
 */
import type { LabelSelector } from '../apis/meta.js';
import { matchesSelector } from '../olm/selector.js';
import { goQuote } from './go-quote.js';

export type CatalogSelector =
  | { ok: true; value: (labels: Record<string, string> | undefined) => boolean }
  | { ok: false; message: string };

export function catalogSelector(selector: LabelSelector | undefined): CatalogSelector {
  // No selector, or an empty one, selects every catalog.
  if (!selector) return { ok: true, value: () => true };
  // matchLabels first (each an Equals requirement with its one value), then matchExpressions.
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    const errors = [...keyErrors(key), ...valueErrors(key, [value])];
    if (errors.length > 0) return invalid(aggregate(errors));
  }
  for (const r of selector.matchExpressions ?? []) {
    const values = r.values ?? [];
    const operator = r.operator as string;
    const errors: string[] = keyErrors(r.key);
    switch (operator) {
      case 'In':
      case 'NotIn':
        // Values are copied with append([]string(nil), ...), so none prints as nil.
        if (values.length === 0)
          errors.push(
            `values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty`,
          );
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length !== 0)
          errors.push(
            `values: Invalid value: []string{${values.map(goQuote).join(', ')}}: values set must be empty for exists and does not exist`,
          );
        break;
      default:
        return invalid(`${goQuote(operator)} is not a valid label selector operator`);
    }
    errors.push(...valueErrors(r.key, values));
    if (errors.length > 0) return invalid(aggregate(errors));
  }
  return { ok: true, value: (labels) => matchesSelector(selector, labels) };
}

const invalid = (message: string): CatalogSelector => ({ ok: false, message });

const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME_MESSAGE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character" +
  ` (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${QUALIFIED_NAME_FMT}')`;
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_MESSAGE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character" +
  ` (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '${LABEL_VALUE_FMT}')`;
const DNS_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character" +
  ` (e.g. 'example.com', regex used for validation is '${DNS_LABEL_FMT}(\\.${DNS_LABEL_FMT})*')`;

const ALNUM = /^[A-Za-z0-9]$/;
const NAME_CHARS = /^[-A-Za-z0-9_.]*$/;
const LOWER_ALNUM = /^[a-z0-9]$/;
const DNS_CHARS = /^[-a-z0-9]*$/;
/** `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, anchored. */
const isQualifiedNamePart = (s: string) =>
  s.length > 0 && ALNUM.test(s[0]!) && ALNUM.test(s.at(-1)!) && NAME_CHARS.test(s);
/** `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`, anchored. */
const isSubdomain = (s: string) =>
  s
    .split('.')
    .every(
      (l) => l.length > 0 && LOWER_ALNUM.test(l[0]!) && LOWER_ALNUM.test(l.at(-1)!) && DNS_CHARS.test(l),
    );
const bytes = (s: string) => Buffer.byteLength(s);

/** validation.IsQualifiedName for a label key, as a field error at `key`. */
function keyErrors(key: string): string[] {
  const problems: string[] = [];
  const parts = key.split('/');
  if (parts.length > 2) {
    problems.push(
      `a qualified name ${QUALIFIED_NAME_MESSAGE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    );
  } else {
    const name = parts.at(-1)!;
    if (parts.length === 2) {
      const prefix = parts[0]!;
      if (prefix === '') problems.push('prefix part must be non-empty');
      else {
        if (bytes(prefix) > 253) problems.push('prefix part must be no more than 253 characters');
        if (!isSubdomain(prefix)) problems.push(`prefix part ${SUBDOMAIN_MESSAGE}`);
      }
    }
    if (name === '') problems.push('name part must be non-empty');
    else if (bytes(name) > 63) problems.push('name part must be no more than 63 characters');
    if (!isQualifiedNamePart(name)) problems.push(`name part ${QUALIFIED_NAME_MESSAGE}`);
  }
  return problems.length === 0 ? [] : [`key: Invalid value: ${goQuote(key)}: ${problems.join('; ')}`];
}

/** validation.IsValidLabelValue for each value, as field errors at `values[i][key]`. */
function valueErrors(key: string, values: readonly string[]): string[] {
  return values.flatMap((v, i) => {
    const problems: string[] = [];
    // Go counts bytes.
    if (bytes(v) > 63) problems.push('must be no more than 63 characters');
    if (v !== '' && !isQualifiedNamePart(v)) problems.push(LABEL_VALUE_MESSAGE);
    return problems.length === 0
      ? []
      : [`values[${i}][${key}]: Invalid value: ${goQuote(v)}: ${problems.join('; ')}`];
  });
}

/** utilerrors.NewAggregate(...).Error(): one message alone, several in brackets, repeats once. */
function aggregate(errors: readonly string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}
