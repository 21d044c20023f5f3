/**
 * OperatorGroup semantics as pure functions: which namespaces a group targets, the annotations
 * that tell an operator about them, and whether a CSV's install modes allow them. The values and
 * messages are OLM's (users' alerts match on the reasons), and '' stands for all namespaces, as
 * in OLM's `status.namespaces`.
 */
import { CSVReason } from '../apis/conditions.js';
import type { OperatorGroup } from '../apis/operators.js';
import { Annotation, type InstallMode, InstallModeType } from '../apis/operators.js';
import { fail, ok, type Result } from '../util/result.js';
import { isEmptySelector, matchesSelector } from '../olm/selector.js';

/** The namespace name that means "all namespaces" in `status.namespaces` and the annotation. */
export const AllNamespaces = '';

/** Which namespaces an operator in an OperatorGroup watches. */
export interface OperatorGroupTargets {
  /** The OperatorGroup's name; its namespace is the operator's namespace. */
  operatorGroup: string;
  /** Sorted target namespaces, or `['']` for all namespaces (the group's `status.namespaces`). */
  namespaces: string[];
}

/** A namespace as the selector sees it. */
export interface NamespaceInfo {
  name: string;
  labels?: Record<string, string>;
}

export function isAllNamespaces(namespaces: readonly string[]): boolean {
  return namespaces.length === 1 && namespaces[0] === AllNamespaces;
}

/**
 * The namespaces an OperatorGroup targets, as OLM computes `status.namespaces`:
 * `spec.targetNamespaces` when it lists any; otherwise every namespace matching `spec.selector`;
 * with neither (or an empty selector), all namespaces. A selector may match none, which the CSV
 * then reports as NoTargetNamespaces.
 */
export function operatorGroupNamespaces(
  og: Pick<OperatorGroup, 'spec'>,
  namespaces: readonly NamespaceInfo[],
): Result<string[]> {
  const spec = og.spec ?? {};
  const targets = spec.targetNamespaces ?? [];
  if (targets.length > 0) {
    if (targets.includes(AllNamespaces)) {
      return fail([
        {
          field: 'spec.targetNamespaces',
          message: 'must not contain "" (all namespaces); leave targetNamespaces and selector out instead',
        },
      ]);
    }
    return ok(sortedUnique(targets));
  }
  const selector = spec.selector;
  if (selector === undefined || isEmptySelector(selector)) return ok([AllNamespaces]);
  return ok(
    sortedUnique(namespaces.filter((ns) => matchesSelector(selector, ns.labels)).map((ns) => ns.name)),
  );
}

/** The `olm.targetNamespaces` value: the targets sorted and comma-joined ('' for all). */
export function targetNamespacesAnnotation(namespaces: readonly string[]): string {
  return sortedUnique(namespaces).join(',');
}

/** Reads an `olm.targetNamespaces` value back into a list (`''` is all namespaces). */
export function parseTargetNamespaces(annotation: string): string[] {
  return annotation.split(',');
}

/** The annotations OLM puts on an operator's CSV and the pod template of its Deployments. */
export function operatorGroupAnnotations(
  targets: OperatorGroupTargets,
  operatorNamespace: string,
): Record<string, string> {
  return {
    [Annotation.OperatorGroup]: targets.operatorGroup,
    [Annotation.OperatorNamespace]: operatorNamespace,
    [Annotation.TargetNamespaces]: targetNamespacesAnnotation(targets.namespaces),
  };
}

export type Verdict = { supported: true } | { supported: false; reason: CSVReason; message: string };

/**
 * Whether a CSV's install modes allow watching `namespaces` from `operatorNamespace`, with OLM's
 * reason and message when they do not (the CSV then goes to phase Failed with that reason).
 */
export function installModeSupport(
  installModes: readonly InstallMode[] | undefined,
  operatorNamespace: string,
  namespaces: readonly string[],
): Verdict {
  const modes = new Map<string, boolean>();
  for (const mode of installModes ?? []) {
    if (modes.has(mode.type)) {
      return unsupported(
        CSVReason.InvalidInstallModes,
        `InstallMode list contains duplicates, cannot make set: ${mode.type} appears more than once`,
      );
    }
    modes.set(mode.type, mode.supported);
  }
  const allows = (t: InstallModeType) => modes.get(t) === true;

  if (namespaces.length === 0) {
    return unsupported(
      CSVReason.NoTargetNamespaces,
      'no targetNamespaces are matched operatorgroups namespace selection',
    );
  }
  if (namespaces.length === 1) {
    const only = namespaces[0];
    if (only === operatorNamespace && !allows(InstallModeType.OwnNamespace)) {
      return notWatchable(InstallModeType.OwnNamespace, 'own namespace');
    }
    if (only === AllNamespaces && !allows(InstallModeType.AllNamespaces)) {
      return notWatchable(InstallModeType.AllNamespaces, 'all namespaces');
    }
    if (only !== operatorNamespace && only !== AllNamespaces && !allows(InstallModeType.SingleNamespace)) {
      return notWatchable(InstallModeType.SingleNamespace, 'one namespace');
    }
    return { supported: true };
  }
  if (!allows(InstallModeType.MultiNamespace)) {
    return notWatchable(InstallModeType.MultiNamespace, `${namespaces.length} namespaces`);
  }
  if (namespaces.includes(AllNamespaces)) {
    return unsupported(
      CSVReason.UnsupportedOperatorGroup,
      'operatorgroup has invalid selected namespaces, NamespaceAll found when |selected namespaces| > 1',
    );
  }
  if (namespaces.includes(operatorNamespace) && !allows(InstallModeType.OwnNamespace)) {
    return notWatchable(InstallModeType.OwnNamespace, 'own namespace');
  }
  return { supported: true };
}

function notWatchable(mode: InstallModeType, what: string): Verdict {
  return unsupported(
    CSVReason.UnsupportedOperatorGroup,
    `${mode} InstallModeType not supported, cannot configure to watch ${what}`,
  );
}

function unsupported(reason: CSVReason, message: string): Verdict {
  return { supported: false, reason, message };
}

/**
 * The one OperatorGroup of a namespace, or OLM's reason for a CSV there not to install: none
 * (NoOperatorGroup) or more than one (TooManyOperatorGroups).
 */
export function pickOperatorGroup<T extends OperatorGroup>(
  groups: readonly T[],
): { ok: true; group: T } | { ok: false; reason: CSVReason; message: string } {
  if (groups.length === 1) return { ok: true, group: groups[0] as T };
  if (groups.length === 0) {
    return {
      ok: false,
      reason: CSVReason.NoOperatorGroup,
      message: 'csv in namespace with no operatorgroups',
    };
  }
  return {
    ok: false,
    reason: CSVReason.TooManyOperatorGroups,
    message: "csv created in namespace with multiple operatorgroups, can't pick one automatically",
  };
}

function sortedUnique(xs: readonly string[]): string[] {
  return [...new Set(xs)].sort();
}

/**
 * OLM labels every namespace an OperatorGroup targets by name or selector (not when it targets
 * all namespaces) with `olm.operatorgroup.uid/<group uid>` and an empty value, so that an
 * operator's admission webhooks can select exactly the group's namespaces.
 */
export const OperatorGroupLabelPrefix = 'olm.operatorgroup.uid/';

export function operatorGroupLabel(uid: string): string {
  return `${OperatorGroupLabelPrefix}${uid}`;
}

/** A group as the namespace labels need it: its uid and `status.namespaces`. */
export interface GroupTargets {
  uid: string;
  namespaces: readonly string[];
}

/**
 * The label changes that make each namespace carry exactly the group labels of the groups
 * targeting it: `null` removes a label (a merge patch's deletion). Namespaces that need no change
 * are left out; the result is sorted by namespace.
 */
export function namespaceLabelChanges(
  namespaces: readonly NamespaceInfo[],
  groups: readonly GroupTargets[],
): { name: string; labels: Record<string, string | null> }[] {
  const wanted = new Map<string, Set<string>>();
  for (const g of groups) {
    if (g.uid === '' || isAllNamespaces(g.namespaces)) continue;
    for (const ns of g.namespaces) {
      const set = wanted.get(ns) ?? new Set<string>();
      set.add(operatorGroupLabel(g.uid));
      wanted.set(ns, set);
    }
  }
  const out: { name: string; labels: Record<string, string | null> }[] = [];
  for (const ns of namespaces) {
    const want = wanted.get(ns.name) ?? new Set<string>();
    const have = ns.labels ?? {};
    const labels: Record<string, string | null> = {};
    for (const key of Object.keys(have)) {
      if (key.startsWith(OperatorGroupLabelPrefix) && !want.has(key)) labels[key] = null;
    }
    for (const key of want) if (have[key] !== '') labels[key] = '';
    if (Object.keys(labels).length > 0) out.push({ name: ns.name, labels });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
