/**
 * A ClusterExtension's `spec.source.catalog.selector` as v1 reads it: apimachinery's
 * LabelSelectorAsSelector, whose errors v1 reports as `desired catalog selector is invalid: ...`.
 * The API server does not check a label selector inside a custom resource, so these reach the
 * resolver. Checked here, worded as labels.NewRequirement words them: the operator, the values
 * each operator needs, and each value's syntax (a label value). Label keys are not checked for
 * their syntax: a key that is no label key matches no catalog, where v1 refuses the selector.
 */
import type { LabelSelector } from '../apis/meta.js';
import { matchesSelector } from '../install/selector.js';
import { goQuote } from './go-quote.js';

export type CatalogSelector =
  | { ok: true; value: (labels: Record<string, string> | undefined) => boolean }
  | { ok: false; message: string };

export function catalogSelector(selector: LabelSelector | undefined): CatalogSelector {
  // No selector, or an empty one, selects every catalog.
  if (!selector) return { ok: true, value: () => true };
  // matchLabels first (each an Equals requirement with its one value), then matchExpressions.
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    const errors = valueErrors(key, [value]);
    if (errors.length > 0) return invalid(aggregate(errors));
  }
  for (const r of selector.matchExpressions ?? []) {
    const values = r.values ?? [];
    const operator = r.operator as string;
    const errors: string[] = [];
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

const LABEL_VALUE_FMT = '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?';
const LABEL_VALUE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const LABEL_VALUE_MESSAGE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character" +
  ` (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '${LABEL_VALUE_FMT}')`;

/** validation.IsValidLabelValue for each value, as field errors at `values[i][key]`. */
function valueErrors(key: string, values: readonly string[]): string[] {
  return values.flatMap((v, i) => {
    const problems: string[] = [];
    // Go counts bytes.
    if (Buffer.byteLength(v) > 63) problems.push('must be no more than 63 characters');
    if (!LABEL_VALUE.test(v)) problems.push(LABEL_VALUE_MESSAGE);
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
