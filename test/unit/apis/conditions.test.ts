import { describe, expect, it } from 'vitest';
import * as conditions from '../../../src/apis/conditions.js';
import { ConditionSets } from '../../../src/apis/conditions.js';
import * as operators from '../../../src/apis/operators.js';

/** The exported `as const` objects of string values in a module (the enum-likes). */
function constantObjects(mod: Record<string, unknown>): [string, Record<string, string>][] {
  return Object.entries(mod).filter(
    (e): e is [string, Record<string, string>] =>
      typeof e[1] === 'object' &&
      e[1] !== null &&
      !Array.isArray(e[1]) &&
      Object.values(e[1]).every((v) => typeof v === 'string'),
  );
}

// Kubernetes' own rule for a condition reason (metav1.Condition validation).
const camelCase = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

describe('condition types and reasons', () => {
  it('every constant object in conditions.ts is listed in ConditionSets, once', () => {
    const listed = ConditionSets.map((s) => s.values);
    for (const [name, values] of constantObjects(conditions)) {
      expect(
        listed.filter((v) => v === values),
        `${name} must appear once in ConditionSets`,
      ).toHaveLength(1);
    }
    expect(listed).toHaveLength(new Set(listed).size);
  });

  it('values are CamelCase, named after themselves, and unique within their set', () => {
    for (const set of ConditionSets) {
      for (const [key, value] of Object.entries(set.values)) {
        expect(value, `${set.kind} ${set.field}`).toMatch(camelCase);
        expect(key, `${set.kind} ${set.field}`).toBe(value);
      }
      expect(new Set(Object.values(set.values)).size).toBe(Object.values(set.values).length);
    }
  });

  it('each kind and field is described by one set', () => {
    const places = ConditionSets.map((s) => `${s.kind} ${s.field}`);
    expect(places).toHaveLength(new Set(places).size);
  });

  // OLM's names (operator-framework/api pkg/operators): users' tooling matches on these strings.
  it.each([
    [
      conditions.CSVReason,
      [
        'RequirementsUnknown',
        'RequirementsNotMet',
        'AllRequirementsMet',
        'OwnerConflict',
        'InstallComponentFailed',
        'InstallComponentFailedNoRetry',
        'InvalidInstallStrategy',
        'InstallWaiting',
        'InstallSucceeded',
        'InstallCheckFailed',
        'ComponentUnhealthy',
        'BeingReplaced',
        'Replaced',
        'NeedsReinstall',
        'NeedsCertRotation',
        'APIServiceResourceIssue',
        'APIServiceResourcesNeedReinstall',
        'APIServiceInstallFailed',
        'Copied',
        'InvalidInstallModes',
        'NoTargetNamespaces',
        'UnsupportedOperatorGroup',
        'NoOperatorGroup',
        'TooManyOperatorGroups',
        'InterOperatorGroupOwnerConflict',
        'CannotModifyStaticOperatorGroupProvidedAPIs',
        'DetectedClusterChange',
        'InvalidWebhookDescription',
        'OperatorConditionNotUpgradeable',
        'WaitingOnCleanup',
      ],
    ],
    [
      conditions.SubscriptionConditionType,
      [
        'CatalogSourcesUnhealthy',
        'InstallPlanMissing',
        'InstallPlanPending',
        'InstallPlanFailed',
        'ResolutionFailed',
        'BundleUnpacking',
        'BundleUnpackFailed',
        'Deprecated',
        'PackageDeprecated',
        'ChannelDeprecated',
        'BundleDeprecated',
      ],
    ],
    [
      conditions.SubscriptionConditionReason,
      [
        'NoCatalogSourcesFound',
        'AllCatalogSourcesHealthy',
        'CatalogSourcesAdded',
        'CatalogSourcesUpdated',
        'CatalogSourcesDeleted',
        'UnhealthyCatalogSourceFound',
        'ReferencedInstallPlanNotFound',
        'InstallPlanNotYetReconciled',
        'InstallPlanFailed',
        'ConstraintsNotSatisfiable',
        'ErrorPreventedResolution',
      ],
    ],
    [conditions.SubscriptionReason, ['InvalidCatalog', 'UpgradeSucceeded']],
    [conditions.InstallPlanConditionType, ['Resolved', 'Installed']],
    [
      conditions.InstallPlanConditionReason,
      ['PlanUnknown', 'InstallCheckFailed', 'DependenciesConflict', 'InstallComponentFailed'],
    ],
    [conditions.BundleLookupConditionType, ['BundleLookupPending', 'BundleLookupFailed']],
    [
      conditions.CatalogSourceReason,
      ['SpecInvalidError', 'ConfigMapError', 'RegistryServerError', 'InvalidIntervalError'],
    ],
    [conditions.OperatorGroupConditionType, ['OperatorGroupServiceAccount', 'MultipleOperatorGroup']],
    [conditions.OperatorGroupConditionReason, ['ServiceAccountNotFound', 'MultipleOperatorGroupsFound']],
    [conditions.OperatorConditionType, ['Upgradeable']],
  ])('%# has all of OLM’s names', (values, olmNames) => {
    expect(Object.values(values)).toEqual(expect.arrayContaining(olmNames));
  });
});

describe('phases and states', () => {
  it.each([
    [
      operators.CSVPhase,
      [
        '',
        'Pending',
        'InstallReady',
        'Installing',
        'Succeeded',
        'Failed',
        'Unknown',
        'Replacing',
        'Deleting',
      ],
    ],
    [
      operators.SubscriptionState,
      ['', 'UpgradeAvailable', 'UpgradePending', 'AtLatestKnown', 'UpgradeFailed'],
    ],
    [operators.InstallPlanPhase, ['', 'Planning', 'RequiresApproval', 'Installing', 'Complete', 'Failed']],
    [
      operators.StepStatus,
      ['Unknown', 'NotPresent', 'Present', 'Created', 'NotCreated', 'WaitingForApi', 'UnsupportedResource'],
    ],
    [operators.Approval, ['Automatic', 'Manual']],
    [operators.InstallModeType, ['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces']],
    [operators.UpgradeStrategy, ['Default', 'TechPreviewUnsafeFailForward']],
    [
      operators.RequirementStatusReason,
      ['Present', 'NotPresent', 'PresentNotSatisfied', 'PresentNotAvailable', 'Satisfied', 'NotSatisfied'],
    ],
  ])('%# is exactly OLM’s set', (values, olm) => {
    expect(Object.values(values).sort()).toEqual([...olm].sort());
  });

  it('every kind is served from operators.coreos.com under its OLM version', () => {
    expect(
      Object.fromEntries(Object.entries(operators.Resources).map(([k, r]) => [k, `${r.group}/${r.version}`])),
    ).toEqual({
      CatalogSource: 'operators.coreos.com/v1alpha1',
      Subscription: 'operators.coreos.com/v1alpha1',
      InstallPlan: 'operators.coreos.com/v1alpha1',
      ClusterServiceVersion: 'operators.coreos.com/v1alpha1',
      OperatorGroup: 'operators.coreos.com/v1',
      OperatorCondition: 'operators.coreos.com/v2',
      Operator: 'operators.coreos.com/v1',
    });
  });
});
