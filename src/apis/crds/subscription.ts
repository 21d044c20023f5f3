import {
  Approval,
  type HeldVersion,
  HistoryOutcome,
  type InstallPlanReference,
  RollbackPhase,
  Resources,
  type Subscription,
  type SubscriptionCatalogHealth,
  type SubscriptionCondition,
  type SubscriptionConfig,
  type SubscriptionHistoryEntry,
  type SubscriptionRollback,
  type SubscriptionSpec,
  type SubscriptionStatus,
} from '../operators.js';
import { conditionStatus, labelSelector, objectReference } from './common.js';
import {
  affinity,
  envFromSource,
  envVar,
  resourceRequirements,
  toleration,
  volume,
  volumeMount,
} from './kubernetes.js';
import { type CrdDefinition, resourceSchema } from './definition.js';
import { array, boolean, integer, map, object, oneOf, required, string, time } from './schema.js';

const config = object<SubscriptionConfig>(
  {
    selector: labelSelector(),
    nodeSelector: map(string()),
    tolerations: array(toleration()),
    resources: resourceRequirements(),
    envFrom: array(envFromSource()),
    env: array(envVar()),
    volumes: array(volume()),
    volumeMounts: array(volumeMount()),
    affinity: affinity(),
    annotations: map(string()),
  },
  { description: "Settings merged into the operator's Deployments (env, resources, scheduling, volumes)." },
);

const spec = object<SubscriptionSpec>(
  {
    source: required(string({ description: 'The CatalogSource to install from.' })),
    sourceNamespace: required(string({ description: "The CatalogSource's namespace." })),
    name: required(string({ description: 'The package to install.' })),
    channel: string({ description: "The channel to follow; the package's default channel if empty." }),
    startingCSV: string({ description: 'The version (CSV name) to install first.' }),
    // Deliberately stricter than OLM, which takes any other value (a typo too) as Automatic.
    installPlanApproval: oneOf(Object.values(Approval), {
      description:
        'Automatic installs upgrades as they appear; Manual waits until an InstallPlan is approved.',
    }),
    config,
  },
  { description: 'Which package to install, from which catalog and channel, and how upgrades are approved.' },
);

const status = object<SubscriptionStatus>(
  {
    currentCSV: string({ description: 'The CSV the Subscription is moving to.' }),
    installedCSV: string({ description: 'The CSV installed by this Subscription.' }),
    installplan: object<InstallPlanReference>(
      {
        apiVersion: required(string()),
        kind: required(string()),
        name: required(string()),
        uuid: required(string()),
      },
      { description: 'Deprecated: use installPlanRef.' },
    ),
    state: string({ description: 'UpgradePending, AtLatestKnown, UpgradeAvailable or UpgradeFailed.' }),
    reason: string(),
    installPlanGeneration: integer(),
    installPlanRef: objectReference({ description: 'The latest InstallPlan that contains the current CSV.' }),
    catalogHealth: array(
      object<SubscriptionCatalogHealth>({
        catalogSourceRef: required(objectReference()),
        lastUpdated: required(time()),
        healthy: required(boolean()),
      }),
    ),
    conditions: array(
      object<SubscriptionCondition>({
        type: required(string()),
        status: required(conditionStatus()),
        reason: string(),
        message: string(),
        lastHeartbeatTime: time(),
        lastTransitionTime: time(),
      }),
    ),
    lastUpdated: required(time()),
    history: array(
      object<SubscriptionHistoryEntry>({
        csv: required(string()),
        version: string(),
        time: required(time()),
        outcome: required(oneOf(Object.values(HistoryOutcome))),
        message: string(),
      }),
      { description: 'The versions installed or tried, newest first (Bosun).' },
    ),
    rollback: object<SubscriptionRollback>(
      {
        phase: required(oneOf(Object.values(RollbackPhase))),
        from: required(
          string({ description: 'The CSV rolled back from; held back until the catalog changes it.' }),
        ),
        to: string({ description: 'The CSV reinstated.' }),
        cause: required(string()),
        message: string(),
        startedAt: required(time()),
        completedAt: time(),
        request: string(),
      },
      { description: 'The last rollback (Bosun).' },
    ),
    heldBack: array(
      object<HeldVersion>({
        csv: required(string()),
        bundleDigest: string(),
        since: required(time()),
      }),
      {
        description:
          'Versions rolled back from, not tried again while the catalog has the same bundle of each (Bosun).',
      },
    ),
  },
  { preserveUnknownFields: true },
);

export const subscriptionCrd: CrdDefinition = {
  resource: Resources.Subscription,
  singular: 'subscription',
  shortNames: ['sub', 'subs'],
  categories: ['olm'],
  printerColumns: [
    { name: 'Package', type: 'string', jsonPath: '.spec.name', description: 'The package subscribed to' },
    { name: 'Source', type: 'string', jsonPath: '.spec.source', description: 'The catalog it installs from' },
    { name: 'Channel', type: 'string', jsonPath: '.spec.channel', description: 'The channel it follows' },
  ],
  schema: resourceSchema<Subscription>('Keeps an operator installed and upgraded from a catalog channel.', {
    spec: required(spec),
    status,
  }).json,
};
