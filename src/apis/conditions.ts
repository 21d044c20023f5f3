/**
 * Every condition type and reason Bosun writes on OLM's kinds, in one place. The values are OLM's
 * (users' scripts and dashboards match on them); Bosun only adds. Each constant object is listed
 * in `ConditionSets` at the bottom, and test/unit/apis/conditions.test.ts checks that the list is
 * complete, that every value is CamelCase and unique, and that OLM's names are all present.
 */

// ---------------------------------------------------------------------------------------------
// ClusterServiceVersion: `status.reason` (and the reason of each `status.conditions` entry).

export const CSVReason = {
  RequirementsUnknown: 'RequirementsUnknown',
  RequirementsNotMet: 'RequirementsNotMet',
  AllRequirementsMet: 'AllRequirementsMet',
  OwnerConflict: 'OwnerConflict',
  InstallComponentFailed: 'InstallComponentFailed',
  InstallComponentFailedNoRetry: 'InstallComponentFailedNoRetry',
  InvalidInstallStrategy: 'InvalidInstallStrategy',
  InstallWaiting: 'InstallWaiting',
  InstallSucceeded: 'InstallSucceeded',
  InstallCheckFailed: 'InstallCheckFailed',
  ComponentUnhealthy: 'ComponentUnhealthy',
  BeingReplaced: 'BeingReplaced',
  Replaced: 'Replaced',
  NeedsReinstall: 'NeedsReinstall',
  NeedsCertRotation: 'NeedsCertRotation',
  APIServiceResourceIssue: 'APIServiceResourceIssue',
  APIServiceResourcesNeedReinstall: 'APIServiceResourcesNeedReinstall',
  APIServiceInstallFailed: 'APIServiceInstallFailed',
  Copied: 'Copied',
  InvalidInstallModes: 'InvalidInstallModes',
  NoTargetNamespaces: 'NoTargetNamespaces',
  UnsupportedOperatorGroup: 'UnsupportedOperatorGroup',
  NoOperatorGroup: 'NoOperatorGroup',
  TooManyOperatorGroups: 'TooManyOperatorGroups',
  InterOperatorGroupOwnerConflict: 'InterOperatorGroupOwnerConflict',
  CannotModifyStaticOperatorGroupProvidedAPIs: 'CannotModifyStaticOperatorGroupProvidedAPIs',
  DetectedClusterChange: 'DetectedClusterChange',
  InvalidWebhookDescription: 'InvalidWebhookDescription',
  OperatorConditionNotUpgradeable: 'OperatorConditionNotUpgradeable',
  WaitingOnCleanup: 'WaitingOnCleanup',
} as const;
export type CSVReason = (typeof CSVReason)[keyof typeof CSVReason];

// ---------------------------------------------------------------------------------------------
// Subscription: condition types are "abnormal-true" (True means something is wrong or pending).

export const SubscriptionConditionType = {
  CatalogSourcesUnhealthy: 'CatalogSourcesUnhealthy',
  InstallPlanMissing: 'InstallPlanMissing',
  InstallPlanPending: 'InstallPlanPending',
  InstallPlanFailed: 'InstallPlanFailed',
  ResolutionFailed: 'ResolutionFailed',
  BundleUnpacking: 'BundleUnpacking',
  BundleUnpackFailed: 'BundleUnpackFailed',
  Deprecated: 'Deprecated',
  PackageDeprecated: 'PackageDeprecated',
  ChannelDeprecated: 'ChannelDeprecated',
  BundleDeprecated: 'BundleDeprecated',
  // Bosun's: the target CSV waits on the operator's Upgradeable=False (its OperatorCondition).
  UpgradeHeld: 'UpgradeHeld',
  // Bosun's: the last upgrade failed and was rolled back (or could not be); see status.rollback.
  RolledBack: 'RolledBack',
} as const;
export type SubscriptionConditionType =
  (typeof SubscriptionConditionType)[keyof typeof SubscriptionConditionType];

/**
 * Reasons on Subscription conditions. `InstallPlanPending` carries the InstallPlan's phase as its
 * reason (e.g. `RequiresApproval`) and `InstallPlanFailed` the InstallPlan condition's reason,
 * as OLM does; those come from InstallPlanPhase and InstallPlanConditionReason.
 */
export const SubscriptionConditionReason = {
  // CatalogSourcesUnhealthy
  NoCatalogSourcesFound: 'NoCatalogSourcesFound',
  AllCatalogSourcesHealthy: 'AllCatalogSourcesHealthy',
  CatalogSourcesAdded: 'CatalogSourcesAdded',
  CatalogSourcesUpdated: 'CatalogSourcesUpdated',
  CatalogSourcesDeleted: 'CatalogSourcesDeleted',
  UnhealthyCatalogSourceFound: 'UnhealthyCatalogSourceFound',
  // InstallPlanMissing / InstallPlanPending / InstallPlanFailed
  ReferencedInstallPlanNotFound: 'ReferencedInstallPlanNotFound',
  InstallPlanNotYetReconciled: 'InstallPlanNotYetReconciled',
  InstallPlanFailed: 'InstallPlanFailed',
  // ResolutionFailed
  ConstraintsNotSatisfiable: 'ConstraintsNotSatisfiable',
  ErrorPreventedResolution: 'ErrorPreventedResolution',
  // RolledBack (Bosun's)
  RollingBack: 'RollingBack',
  RolledBack: 'RolledBack',
  RollbackRefused: 'RollbackRefused',
} as const;
export type SubscriptionConditionReason =
  (typeof SubscriptionConditionReason)[keyof typeof SubscriptionConditionReason];

/** `sub.status.reason`: why the Subscription is in its current `state`. */
export const SubscriptionReason = {
  InvalidCatalog: 'InvalidCatalog',
  UpgradeSucceeded: 'UpgradeSucceeded',
} as const;
export type SubscriptionReason = (typeof SubscriptionReason)[keyof typeof SubscriptionReason];

// ---------------------------------------------------------------------------------------------
// InstallPlan

export const InstallPlanConditionType = {
  Resolved: 'Resolved',
  Installed: 'Installed',
  // Bosun's: what it changed in a bundle's objects to install them (OLM's API server would have
  // dropped the same fields silently; OLM's InstallPlanCondition allows any type).
  Pruned: 'Pruned',
  BundleWarnings: 'BundleWarnings',
  // Bosun's: bundle RBAC that would reach beyond the operator, left out or allowed by the
  // OperatorGroup (install/rbac-policy.ts).
  BroadRBAC: 'BroadRBAC',
} as const;
export type InstallPlanConditionType =
  (typeof InstallPlanConditionType)[keyof typeof InstallPlanConditionType];

export const InstallPlanConditionReason = {
  PlanUnknown: 'PlanUnknown',
  InstallCheckFailed: 'InstallCheckFailed',
  DependenciesConflict: 'DependenciesConflict',
  InstallComponentFailed: 'InstallComponentFailed',
  // Bosun's, for its Pruned and BundleWarnings conditions.
  UndeclaredFieldsPruned: 'UndeclaredFieldsPruned',
  BundleDecodedWithWarnings: 'BundleDecodedWithWarnings',
  // Bosun's: a CRD replacement refused before anything changed (controllers/installplan-crd-safety.ts).
  UnsafeCRDUpgrade: 'UnsafeCRDUpgrade',
  // Bosun's, for its BroadRBAC condition: the bundle RBAC found was left out, or applied as
  // shipped because the OperatorGroup's bosun.dev/allow-broad-rbac allows it.
  BroadRBACRefused: 'BroadRBACRefused',
  BroadRBACAllowed: 'BroadRBACAllowed',
  // Bosun's: an install scoped to an OperatorGroup's ServiceAccount refused before anything was
  // written, because the bundle asks for everything (`*` on `*`, cluster-admin), or because the
  // ServiceAccount may not do all the install needs (controllers/installplan-access.ts).
  ScopedInstallRefused: 'ScopedInstallRefused',
  ServiceAccountLacksPermissions: 'ServiceAccountLacksPermissions',
} as const;
export type InstallPlanConditionReason =
  (typeof InstallPlanConditionReason)[keyof typeof InstallPlanConditionReason];

export const BundleLookupConditionType = {
  BundleLookupPending: 'BundleLookupPending',
  BundleLookupFailed: 'BundleLookupFailed',
} as const;
export type BundleLookupConditionType =
  (typeof BundleLookupConditionType)[keyof typeof BundleLookupConditionType];

// ---------------------------------------------------------------------------------------------
// CatalogSource: `status.reason` when the source is broken.

export const CatalogSourceReason = {
  SpecInvalidError: 'SpecInvalidError',
  ConfigMapError: 'ConfigMapError',
  RegistryServerError: 'RegistryServerError',
  InvalidIntervalError: 'InvalidIntervalError',
} as const;
export type CatalogSourceReason = (typeof CatalogSourceReason)[keyof typeof CatalogSourceReason];

// ---------------------------------------------------------------------------------------------
// OperatorGroup (metav1.Condition)

export const OperatorGroupConditionType = {
  OperatorGroupServiceAccount: 'OperatorGroupServiceAccount',
  MultipleOperatorGroup: 'MultipleOperatorGroup',
} as const;
export type OperatorGroupConditionType =
  (typeof OperatorGroupConditionType)[keyof typeof OperatorGroupConditionType];

export const OperatorGroupConditionReason = {
  ServiceAccountNotFound: 'ServiceAccountNotFound',
  MultipleOperatorGroupsFound: 'MultipleOperatorGroupsFound',
} as const;
export type OperatorGroupConditionReason =
  (typeof OperatorGroupConditionReason)[keyof typeof OperatorGroupConditionReason];

// ---------------------------------------------------------------------------------------------
// OperatorCondition (metav1.Condition, written by the operator or overridden by an admin)

export const OperatorConditionType = {
  Upgradeable: 'Upgradeable',
} as const;
export type OperatorConditionType = (typeof OperatorConditionType)[keyof typeof OperatorConditionType];

// ---------------------------------------------------------------------------------------------

/** A group of condition constants and where on which kind they are written. */
export interface ConditionSet {
  kind: string;
  /** The field the values go into, e.g. `status.conditions[].type`. */
  field: string;
  values: Readonly<Record<string, string>>;
}

/** Every constant object above, once. The completeness test fails if one is left out. */
export const ConditionSets: readonly ConditionSet[] = [
  { kind: 'ClusterServiceVersion', field: 'status.reason', values: CSVReason },
  { kind: 'Subscription', field: 'status.conditions[].type', values: SubscriptionConditionType },
  { kind: 'Subscription', field: 'status.conditions[].reason', values: SubscriptionConditionReason },
  { kind: 'Subscription', field: 'status.reason', values: SubscriptionReason },
  { kind: 'InstallPlan', field: 'status.conditions[].type', values: InstallPlanConditionType },
  { kind: 'InstallPlan', field: 'status.conditions[].reason', values: InstallPlanConditionReason },
  {
    kind: 'InstallPlan',
    field: 'status.bundleLookups[].conditions[].type',
    values: BundleLookupConditionType,
  },
  { kind: 'CatalogSource', field: 'status.reason', values: CatalogSourceReason },
  { kind: 'OperatorGroup', field: 'status.conditions[].type', values: OperatorGroupConditionType },
  { kind: 'OperatorGroup', field: 'status.conditions[].reason', values: OperatorGroupConditionReason },
  { kind: 'OperatorCondition', field: 'spec.conditions[].type', values: OperatorConditionType },
];
