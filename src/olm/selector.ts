/**
 * metav1.LabelSelector evaluation over plain label maps, for OperatorGroup namespace selectors,
 * the Subscription config's pod selector and ClusterExtension catalog selectors. Semantics are
 * Kubernetes': requirements are ANDed, and a selector with no requirements matches everything.
 */
import type { LabelSelector, LabelSelectorRequirement } from '../apis/meta.js';

/** True when the selector has no requirements (Kubernetes' `selector.Empty()`). */
export function isEmptySelector(selector: LabelSelector | undefined): boolean {
  return (
    selector === undefined ||
    (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)
  );
}

export function matchesSelector(
  selector: LabelSelector,
  labels: Record<string, string> | undefined,
): boolean {
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (have[key] !== value) return false;
  }
  return (selector.matchExpressions ?? []).every((r) => matchesRequirement(r, have));
}

function matchesRequirement(r: LabelSelectorRequirement, labels: Record<string, string>): boolean {
  const present = Object.hasOwn(labels, r.key);
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return present && values.includes(labels[r.key] as string);
    case 'NotIn':
      return !present || !values.includes(labels[r.key] as string);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
    default:
      // An operator the API server would have rejected; match nothing rather than everything.
      return false;
  }
}
