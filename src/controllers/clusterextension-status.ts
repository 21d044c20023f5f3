/**
 * The status of an OLM v1 ClusterExtension for one outcome of a reconcile, in operator-controller
 * v1.2.0's words (internal/operator-controller/controllers/clusterextension_controller.go and
 * common_controller.go). Pure: no clients, no clock (times are passed in).
 *
 * - `Installed`: True `Succeeded` "Installed bundle <image> successfully" with `install.bundle`
 *   once a bundle is installed; False `Failed` "No bundle installed" before. Bosun counts a
 *   bundle installed when its CSV has `Succeeded` (v1 counts it once its objects are applied).
 * - `Progressing`: True `Succeeded` "desired state reached" once the resolved bundle is the one
 *   installed; True `Retrying` with the cause while it is not (resolution failed, the install is
 *   under way or failed); False `Blocked` when retrying cannot help (another front end owns the
 *   package, or the namespace's own OperatorGroup targets other namespaces than asked); False
 *   `InvalidConfiguration` when `spec.config` does not fit the bundle (v1's terminal reason).
 * - After a successful resolution, `Deprecated` and the three kinds of deprecation, from the
 *   package's `olm.deprecations` in the catalog the bundle came from; after a failed one, every
 *   condition type v1 knows that is not there yet is added False `Failed` with the error.
 */
import type { DeprecationsDoc } from '../apis/fbc.js';
import type { Condition } from '../apis/meta.js';
import type { BundleMetadata, ClusterExtension, ClusterExtensionStatus } from '../apis/olmv1.js';
import { setCondition } from '../kube/conditions.js';

export const ExtensionConditionType = {
  Installed: 'Installed',
  Progressing: 'Progressing',
  Deprecated: 'Deprecated',
  PackageDeprecated: 'PackageDeprecated',
  ChannelDeprecated: 'ChannelDeprecated',
  BundleDeprecated: 'BundleDeprecated',
  /** v1 lists it among a ClusterExtension's condition types (conditionsets), though it sets it only on catalogs. */
  Serving: 'Serving',
} as const;

export const ExtensionConditionReason = {
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  Retrying: 'Retrying',
  Blocked: 'Blocked',
  Deprecated: 'Deprecated',
  InvalidConfiguration: 'InvalidConfiguration',
} as const;

/** A bundle installed: its name and version, and the image v1 names in `Installed`. */
export interface InstalledBundle {
  bundle: BundleMetadata;
  image: string;
}

export type ExtensionOutcome =
  /** Resolution failed: v1's error, retried. */
  | { kind: 'unresolved'; message: string }
  /** Resolved, and not installed yet (or failing): why, retried. */
  | {
      kind: 'progressing';
      message: string;
      resolved: Resolved;
    }
  /** Refused before resolving, and retrying cannot help until something else changes. */
  | { kind: 'blocked'; message: string }
  /** The extension's configuration does not fit the resolved bundle: nothing is installed until it changes. */
  | { kind: 'invalid'; message: string; resolved: Resolved }
  /** The resolved bundle is the one installed. */
  | { kind: 'installed'; resolved: Resolved };

/** The bundle resolution picked: its name and version, the image its catalog names, its package's deprecations. */
export interface Resolved {
  bundle: BundleMetadata;
  image?: string;
  deprecation?: DeprecationsDoc;
}

const Type = ExtensionConditionType;
const Reason = ExtensionConditionReason;

export function clusterExtensionStatus(
  ext: ClusterExtension,
  outcome: ExtensionOutcome,
  installed: InstalledBundle | undefined,
  now: number,
): ClusterExtensionStatus {
  const generation = ext.metadata.generation;
  let conditions: Condition[] = [...(ext.status?.conditions ?? [])];
  const set = (type: string, status: 'True' | 'False', reason: string, message: string) => {
    conditions = setCondition<Condition>(
      conditions,
      {
        type,
        status,
        reason,
        message,
        ...(generation !== undefined ? { observedGeneration: generation } : {}),
      },
      now,
    );
  };

  if (outcome.kind === 'progressing' || outcome.kind === 'installed' || outcome.kind === 'invalid')
    for (const [type, message] of deprecationConditions(ext, outcome.resolved))
      set(type, message === undefined ? 'False' : 'True', Reason.Deprecated, message ?? '');

  if (outcome.kind === 'installed') set(Type.Progressing, 'True', Reason.Succeeded, 'desired state reached');
  else if (outcome.kind === 'blocked') set(Type.Progressing, 'False', Reason.Blocked, outcome.message);
  else if (outcome.kind === 'invalid')
    set(Type.Progressing, 'False', Reason.InvalidConfiguration, outcome.message);
  else set(Type.Progressing, 'True', Reason.Retrying, outcome.message);

  if (installed)
    set(Type.Installed, 'True', Reason.Succeeded, `Installed bundle ${installed.image} successfully`);
  else set(Type.Installed, 'False', Reason.Failed, 'No bundle installed');

  if (outcome.kind === 'unresolved')
    for (const type of Object.values(Type))
      if (!conditions.some((c) => c.type === type)) set(type, 'False', Reason.Failed, outcome.message);

  return { conditions, ...(installed ? { install: { bundle: installed.bundle } } : {}) };
}

/**
 * Each deprecation condition and its message (undefined: not deprecated), as v1's
 * SetDeprecationStatus gives them: the package's entry, the entries of the channels the
 * extension asks for, and the resolved bundle's; `Deprecated` joins their messages with `;`, each
 * kind's own condition joins its entries' messages each after a newline.
 */
function deprecationConditions(ext: ClusterExtension, resolved: Resolved): [string, string | undefined][] {
  const channels = new Set(ext.spec?.source.catalog?.channels ?? []);
  const byType = new Map<string, string[]>();
  for (const entry of resolved.deprecation?.entries ?? []) {
    const { schema, name } = entry.reference;
    if (schema === 'olm.package') byType.set(Type.PackageDeprecated, [entry.message]);
    else if (schema === 'olm.channel' && name !== undefined && channels.has(name))
      byType.set(Type.ChannelDeprecated, [...(byType.get(Type.ChannelDeprecated) ?? []), entry.message]);
    else if (schema === 'olm.bundle' && name === resolved.bundle.name)
      byType.set(Type.BundleDeprecated, [entry.message]);
  }
  const kinds = [Type.PackageDeprecated, Type.ChannelDeprecated, Type.BundleDeprecated];
  const all = kinds.flatMap((k) => byType.get(k) ?? []);
  return [
    [Type.Deprecated, all.length > 0 ? all.join(';') : undefined],
    ...kinds.map((k): [string, string | undefined] => {
      const messages = byType.get(k);
      return [k, messages ? messages.map((m) => `\n${m}`).join('') : undefined];
    }),
  ];
}
