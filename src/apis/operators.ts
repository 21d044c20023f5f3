/**
 * OLM's API kinds (operators.coreos.com) as TypeScript types. Field names, phases, states and
 * step statuses are OLM's, so manifests written for OLM load unchanged; where Bosun adds
 * something it adds fields, it never renames. The CRDs under deploy/crds are generated from
 * schemas that are type-checked against these types (src/apis/crds), so the two cannot drift.
 * Condition types and reasons live in ./conditions.ts.
 */
import type {
  V1Affinity,
  V1DeploymentSpec,
  V1EnvFromSource,
  V1EnvVar,
  V1PolicyRule,
  V1ResourceRequirements,
  V1RuleWithOperations,
  V1Toleration,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import type {
  BundleLookupConditionType,
  CatalogSourceReason,
  CSVReason,
  InstallPlanConditionReason,
  InstallPlanConditionType,
  SubscriptionConditionType,
  SubscriptionReason,
} from './conditions.js';
import type {
  Condition,
  ConditionStatus,
  GroupVersionKind,
  KubeObject,
  LabelSelector,
  ObjectMeta,
  ObjectReference,
  ResourceType,
  Time,
} from './meta.js';

export const OperatorsGroup = 'operators.coreos.com';

/** Where each kind is served. The CRDs, informers and API paths all derive from these. */
export const Resources = {
  CatalogSource: {
    group: OperatorsGroup,
    version: 'v1alpha1',
    kind: 'CatalogSource',
    plural: 'catalogsources',
    namespaced: true,
  },
  Subscription: {
    group: OperatorsGroup,
    version: 'v1alpha1',
    kind: 'Subscription',
    plural: 'subscriptions',
    namespaced: true,
  },
  InstallPlan: {
    group: OperatorsGroup,
    version: 'v1alpha1',
    kind: 'InstallPlan',
    plural: 'installplans',
    namespaced: true,
  },
  ClusterServiceVersion: {
    group: OperatorsGroup,
    version: 'v1alpha1',
    kind: 'ClusterServiceVersion',
    plural: 'clusterserviceversions',
    namespaced: true,
  },
  OperatorGroup: {
    group: OperatorsGroup,
    version: 'v1',
    kind: 'OperatorGroup',
    plural: 'operatorgroups',
    namespaced: true,
  },
  OperatorCondition: {
    group: OperatorsGroup,
    version: 'v2',
    kind: 'OperatorCondition',
    plural: 'operatorconditions',
    namespaced: true,
  },
  Operator: {
    group: OperatorsGroup,
    version: 'v1',
    kind: 'Operator',
    plural: 'operators',
    namespaced: false,
  },
} as const satisfies Record<string, ResourceType>;
export type OperatorsKind = keyof typeof Resources;

/** An object of one of OLM's kinds: metadata is always present on objects from the API. */
export interface OperatorsObject<Kind extends OperatorsKind, Spec, Status> extends KubeObject {
  apiVersion: `${(typeof Resources)[Kind]['group']}/${(typeof Resources)[Kind]['version']}`;
  kind: Kind;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}

/** Annotations OLM puts on CSVs and operator Deployments; operators read them. */
export const Annotation = {
  OperatorGroup: 'olm.operatorGroup',
  OperatorNamespace: 'olm.operatorNamespace',
  TargetNamespaces: 'olm.targetNamespaces',
  ProvidedAPIs: 'olm.providedAPIs',
  SkipRange: 'olm.skipRange',
} as const;
export type Annotation = (typeof Annotation)[keyof typeof Annotation];

/**
 * Labels on every object Bosun creates: `olm.managed=true` selects them all; the owner labels
 * name the owning object, which matters for cluster-scoped objects that cannot carry an
 * ownerReference to a namespaced owner.
 */
export const Label = {
  Managed: 'olm.managed',
  Owner: 'olm.owner',
  OwnerKind: 'olm.owner.kind',
  OwnerNamespace: 'olm.owner.namespace',
} as const;
export type Label = (typeof Label)[keyof typeof Label];

// ---------------------------------------------------------------------------------------------
// CatalogSource (v1alpha1)

export const SourceType = {
  Grpc: 'grpc',
  ConfigMap: 'configmap',
  /** Deprecated in OLM (an alias of configmap); accepted for old manifests. */
  Internal: 'internal',
  /** Bosun's addition: a URL serving FBC (a file `bosun catalog render -o json` wrote, or catalogd's `/api/v1/all`). */
  Http: 'http',
} as const;
export type SourceType = (typeof SourceType)[keyof typeof SourceType];

export const SecurityConfig = { Legacy: 'legacy', Restricted: 'restricted' } as const;
export type SecurityConfig = (typeof SecurityConfig)[keyof typeof SecurityConfig];

/** `status.connectionState.lastObservedState`: the gRPC connectivity states OLM reports. */
export const ConnectionState = {
  Idle: 'IDLE',
  Connecting: 'CONNECTING',
  Ready: 'READY',
  TransientFailure: 'TRANSIENT_FAILURE',
  Shutdown: 'SHUTDOWN',
} as const;
export type ConnectionState = (typeof ConnectionState)[keyof typeof ConnectionState];

/** OLM polls a catalog every 15 minutes when `updateStrategy.registryPoll.interval` does not parse. */
export const DefaultRegistryPollInterval = '15m';

export interface Icon {
  base64data: string;
  mediatype: string;
}

export interface RegistryPoll {
  /** A Go duration, e.g. `10m`, `1h30m`. */
  interval?: string;
}

export interface UpdateStrategy {
  registryPoll?: RegistryPoll;
}

export interface ExtractContentConfig {
  cacheDir?: string;
  catalogDir: string;
}

export interface GrpcPodConfig {
  nodeSelector?: Record<string, string>;
  tolerations?: V1Toleration[];
  affinity?: V1Affinity;
  priorityClassName?: string;
  securityContextConfig?: SecurityConfig;
  memoryTarget?: string | number;
  extractContent?: ExtractContentConfig;
}

export interface CatalogSourceSpec {
  sourceType: SourceType;
  priority?: number;
  configMap?: string;
  /**
   * For `grpc`, OLM's `host:port` of a running registry. For Bosun's `http`, the URL that serves
   * the catalog's FBC documents.
   */
  address?: string;
  image?: string;
  grpcPodConfig?: GrpcPodConfig;
  updateStrategy?: UpdateStrategy;
  secrets?: string[];
  displayName?: string;
  description?: string;
  publisher?: string;
  icon?: Icon;
}

export interface RegistryServiceStatus {
  protocol?: string;
  serviceName?: string;
  serviceNamespace?: string;
  port?: string;
  createdAt?: Time;
}

export interface GRPCConnectionState {
  address?: string;
  lastObservedState: ConnectionState | (string & {});
  lastConnect?: Time;
}

export interface ConfigMapResourceReference {
  name: string;
  namespace: string;
  uid?: string;
  resourceVersion?: string;
  lastUpdateTime?: Time;
}

export interface CatalogSourceStatus {
  message?: string;
  reason?: CatalogSourceReason;
  latestImageRegistryPoll?: Time;
  configMapReference?: ConfigMapResourceReference;
  registryService?: RegistryServiceStatus;
  connectionState?: GRPCConnectionState;
  conditions?: Condition[];
}

export type CatalogSource = OperatorsObject<'CatalogSource', CatalogSourceSpec, CatalogSourceStatus>;

// ---------------------------------------------------------------------------------------------
// Subscription (v1alpha1)

export const Approval = { Automatic: 'Automatic', Manual: 'Manual' } as const;
export type Approval = (typeof Approval)[keyof typeof Approval];

/** `sub.status.state`. OLM leaves it empty (`None`) until it has resolved the Subscription once. */
export const SubscriptionState = {
  None: '',
  UpgradeAvailable: 'UpgradeAvailable',
  UpgradePending: 'UpgradePending',
  AtLatestKnown: 'AtLatestKnown',
  UpgradeFailed: 'UpgradeFailed',
} as const;
export type SubscriptionState = (typeof SubscriptionState)[keyof typeof SubscriptionState];

export interface SubscriptionConfig {
  selector?: LabelSelector;
  nodeSelector?: Record<string, string>;
  tolerations?: V1Toleration[];
  resources?: V1ResourceRequirements;
  envFrom?: V1EnvFromSource[];
  env?: V1EnvVar[];
  volumes?: V1Volume[];
  volumeMounts?: V1VolumeMount[];
  affinity?: V1Affinity;
  annotations?: Record<string, string>;
}

export interface SubscriptionSpec {
  /** The CatalogSource's name. */
  source: string;
  sourceNamespace: string;
  /** The package name. */
  name: string;
  channel?: string;
  startingCSV?: string;
  installPlanApproval?: Approval;
  config?: SubscriptionConfig;
}

/** OLM's Subscription condition (not metav1.Condition: no observedGeneration, has a heartbeat). */
export interface SubscriptionCondition {
  type: SubscriptionConditionType;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: Time;
  lastTransitionTime?: Time;
}

/** Deprecated in OLM in favour of `installPlanRef`; still written for old clients. */
export interface InstallPlanReference {
  apiVersion: string;
  kind: string;
  name: string;
  uuid: string;
}

export interface SubscriptionCatalogHealth {
  catalogSourceRef: ObjectReference;
  lastUpdated: Time;
  healthy: boolean;
}

export interface SubscriptionStatus {
  currentCSV?: string;
  installedCSV?: string;
  installplan?: InstallPlanReference;
  state?: SubscriptionState;
  reason?: SubscriptionReason;
  installPlanGeneration?: number;
  installPlanRef?: ObjectReference;
  catalogHealth?: SubscriptionCatalogHealth[];
  conditions?: SubscriptionCondition[];
  lastUpdated: Time;
  /** Bosun's: the versions this Subscription installed, newest first (a short history). */
  history?: SubscriptionHistoryEntry[];
  /** Bosun's: the last rollback, while it is under way and while its failed version is held back. */
  rollback?: SubscriptionRollback;
  /** Bosun's: versions rolled back from, kept out of resolution while the catalog's bundle of each is unchanged. */
  heldBack?: HeldVersion[];
}

export interface HeldVersion {
  csv: string;
  /** A fingerprint of the catalog's bundle of it when it was rolled back from. */
  bundleDigest?: string;
  since: Time;
}

/** What became of a version the Subscription installed or tried. */
export const HistoryOutcome = {
  /** Reached Succeeded. */
  Installed: 'Installed',
  /** An upgrade to it failed (never became healthy in time, or Failed) and was rolled back. */
  Failed: 'Failed',
  /** Reinstated by a rollback, and Succeeded again. */
  RolledBack: 'RolledBack',
} as const;
export type HistoryOutcome = (typeof HistoryOutcome)[keyof typeof HistoryOutcome];

export interface SubscriptionHistoryEntry {
  csv: string;
  version?: string;
  time: Time;
  outcome: HistoryOutcome;
  message?: string;
}

export const RollbackPhase = {
  /** The failed version is being removed and the previous one reinstated. */
  RollingBack: 'RollingBack',
  /** The previous version runs again; the failed one is held back. */
  RolledBack: 'RolledBack',
  /** Rolling back would lose what the cluster stores, or there is nothing to go back to: nothing was changed. */
  Refused: 'Refused',
} as const;
export type RollbackPhase = (typeof RollbackPhase)[keyof typeof RollbackPhase];

export interface SubscriptionRollback {
  phase: RollbackPhase;
  /** The CSV rolled back from (held back: see `heldBack`). */
  from: string;
  /** The CSV reinstated. */
  to?: string;
  /** Why: the deadline passed, the CSV failed, or a user asked. */
  cause: string;
  message?: string;
  startedAt: Time;
  completedAt?: Time;
  /** The value of the rollback request annotation this rollback answered, if a user asked. */
  request?: string;
}

export type Subscription = OperatorsObject<'Subscription', SubscriptionSpec, SubscriptionStatus>;

// ---------------------------------------------------------------------------------------------
// InstallPlan (v1alpha1)

export const InstallPlanPhase = {
  None: '',
  Planning: 'Planning',
  RequiresApproval: 'RequiresApproval',
  Installing: 'Installing',
  Complete: 'Complete',
  Failed: 'Failed',
} as const;
export type InstallPlanPhase = (typeof InstallPlanPhase)[keyof typeof InstallPlanPhase];

/** The status of one step (one object to create) of an InstallPlan. */
export const StepStatus = {
  Unknown: 'Unknown',
  NotPresent: 'NotPresent',
  Present: 'Present',
  Created: 'Created',
  NotCreated: 'NotCreated',
  WaitingForAPI: 'WaitingForApi',
  UnsupportedResource: 'UnsupportedResource',
} as const;
export type StepStatus = (typeof StepStatus)[keyof typeof StepStatus];

export interface InstallPlanSpec {
  source?: string;
  sourceNamespace?: string;
  clusterServiceVersionNames: string[];
  approval: Approval;
  approved: boolean;
  generation?: number;
}

export interface InstallPlanCondition {
  type?: InstallPlanConditionType;
  status?: ConditionStatus;
  lastUpdateTime?: Time;
  lastTransitionTime?: Time;
  reason?: InstallPlanConditionReason;
  message?: string;
}

export interface StepResource {
  sourceName: string;
  sourceNamespace: string;
  group: string;
  version: string;
  kind: string;
  name: string;
  /** The object to create, as JSON text (OLM stores it as a string). */
  manifest?: string;
}

export interface Step {
  /** The CSV this step belongs to. */
  resolving: string;
  resource: StepResource;
  optional?: boolean;
  status: StepStatus;
}

export interface BundleLookupCondition {
  type: BundleLookupConditionType;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastUpdateTime?: Time;
  lastTransitionTime?: Time;
}

export interface BundleLookup {
  path: string;
  identifier: string;
  replaces: string;
  catalogSourceRef: ObjectReference;
  conditions?: BundleLookupCondition[];
  properties?: string;
}

export interface InstallPlanStatus {
  phase: InstallPlanPhase;
  conditions?: InstallPlanCondition[];
  catalogSources: string[];
  plan?: Step[];
  bundleLookups?: BundleLookup[];
  attenuatedServiceAccountRef?: ObjectReference;
  startTime?: Time;
  message?: string;
  /** Bosun's: what approving the plan would do, in short (`bosun plan` shows it in full). */
  summary?: InstallPlanSummary;
}

/** One hop of an upgrade through a channel: the entry `to` upgrades `from` by its `via` edge. */
export interface InstallPlanPathHop {
  from: string;
  to: string;
  via: 'replaces' | 'skips' | 'skipRange';
  /** For a skipRange hop, the entry's range. */
  skipRange?: string;
}

/**
 * What approving an InstallPlan would do, written when its steps are first planned (so it says
 * what was there then): the installed CSV it upgrades, the path to the new one through the
 * catalog's channel, how many of its objects exist already, and the RBAC rules added and removed.
 */
export interface InstallPlanSummary {
  /** The installed CSV the plan upgrades; absent for a new install. */
  from?: string;
  to: string[];
  /** The channel the path goes through; absent when there is no path (or no upgrade). */
  channel?: string;
  path?: InstallPlanPathHop[];
  /** Steps whose object does not exist yet, those that do (applied again), and CSVs replaced. */
  objects: { create: number; present: number; delete: number };
  /** CSV permission rules (per service account) added and removed. */
  rbac: { added: number; removed: number };
  /**
   * For a plan awaiting approval: the CRD safety check of the CRDs it would replace, as it was when
   * the plan was made (approving runs it again, and that verdict is the one that counts).
   */
  crdSafety?: { safe: boolean; findings: string[] };
}

export type InstallPlan = OperatorsObject<'InstallPlan', InstallPlanSpec, InstallPlanStatus>;

// ---------------------------------------------------------------------------------------------
// ClusterServiceVersion (v1alpha1)

export const CSVPhase = {
  None: '',
  Pending: 'Pending',
  InstallReady: 'InstallReady',
  Installing: 'Installing',
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  Unknown: 'Unknown',
  Replacing: 'Replacing',
  Deleting: 'Deleting',
} as const;
export type CSVPhase = (typeof CSVPhase)[keyof typeof CSVPhase];

export const InstallModeType = {
  OwnNamespace: 'OwnNamespace',
  SingleNamespace: 'SingleNamespace',
  MultiNamespace: 'MultiNamespace',
  AllNamespaces: 'AllNamespaces',
} as const;
export type InstallModeType = (typeof InstallModeType)[keyof typeof InstallModeType];

/** The only install strategy OLM knows. */
export const InstallStrategyName = { Deployment: 'deployment' } as const;
export type InstallStrategyName = (typeof InstallStrategyName)[keyof typeof InstallStrategyName];

export const WebhookAdmissionType = {
  ValidatingAdmissionWebhook: 'ValidatingAdmissionWebhook',
  MutatingAdmissionWebhook: 'MutatingAdmissionWebhook',
  ConversionWebhook: 'ConversionWebhook',
} as const;
export type WebhookAdmissionType = (typeof WebhookAdmissionType)[keyof typeof WebhookAdmissionType];

/** `status.requirementStatus[].status` and its dependents' status. */
export const RequirementStatusReason = {
  Present: 'Present',
  NotPresent: 'NotPresent',
  PresentNotSatisfied: 'PresentNotSatisfied',
  /** The CRD exists but is not Established. */
  NotAvailable: 'PresentNotAvailable',
  Satisfied: 'Satisfied',
  NotSatisfied: 'NotSatisfied',
} as const;
export type RequirementStatusReason = (typeof RequirementStatusReason)[keyof typeof RequirementStatusReason];

export interface InstallMode {
  type: InstallModeType;
  supported: boolean;
}

export interface StrategyDeploymentPermissions {
  serviceAccountName: string;
  rules: V1PolicyRule[];
}

export interface StrategyDeploymentSpec {
  name: string;
  spec: V1DeploymentSpec;
  label?: Record<string, string>;
}

export interface StrategyDetailsDeployment {
  deployments: StrategyDeploymentSpec[];
  permissions?: StrategyDeploymentPermissions[];
  clusterPermissions?: StrategyDeploymentPermissions[];
}

export interface NamedInstallStrategy {
  strategy: InstallStrategyName | (string & {});
  spec?: StrategyDetailsDeployment;
}

/** A spec, status or action descriptor: UI hints for one field of a custom resource. */
export interface Descriptor {
  path: string;
  displayName?: string;
  description?: string;
  'x-descriptors'?: string[];
  /** Raw JSON, base64-encoded (OLM's `json.RawMessage`). */
  value?: string;
}

export interface APIResourceReference {
  name: string;
  kind: string;
  version: string;
}

export interface CRDDescription {
  /** The CRD's name, `<plural>.<group>`. */
  name: string;
  version: string;
  kind: string;
  displayName?: string;
  description?: string;
  resources?: APIResourceReference[];
  statusDescriptors?: Descriptor[];
  specDescriptors?: Descriptor[];
  actionDescriptors?: Descriptor[];
}

export interface APIServiceDescription {
  name: string;
  group: string;
  version: string;
  kind: string;
  deploymentName?: string;
  containerPort?: number;
  displayName?: string;
  description?: string;
  resources?: APIResourceReference[];
  statusDescriptors?: Descriptor[];
  specDescriptors?: Descriptor[];
  actionDescriptors?: Descriptor[];
}

export interface CustomResourceDefinitions {
  owned?: CRDDescription[];
  required?: CRDDescription[];
}

export interface APIServiceDefinitions {
  owned?: APIServiceDescription[];
  required?: APIServiceDescription[];
}

export interface WebhookDescription {
  generateName: string;
  type: WebhookAdmissionType;
  deploymentName?: string;
  containerPort?: number;
  targetPort?: number | string;
  rules?: V1RuleWithOperations[];
  failurePolicy?: string;
  matchPolicy?: string;
  objectSelector?: LabelSelector;
  sideEffects: string;
  timeoutSeconds?: number;
  admissionReviewVersions: string[];
  reinvocationPolicy?: string;
  webhookPath?: string;
  conversionCRDs?: string[];
}

export interface Maintainer {
  name?: string;
  email?: string;
}

export interface AppLink {
  name?: string;
  url?: string;
}

export interface RelatedImage {
  name: string;
  image: string;
}

export interface CleanupSpec {
  enabled: boolean;
}

export interface ClusterServiceVersionSpec {
  install: NamedInstallStrategy;
  /** A semantic version (OLM's OperatorVersion serialises as a string). */
  version?: string;
  /** Tells builds of one version apart; a semver pre-release such as `1` or `2.rc-1`. */
  release?: string;
  maturity?: string;
  customresourcedefinitions?: CustomResourceDefinitions;
  apiservicedefinitions?: APIServiceDefinitions;
  webhookdefinitions?: WebhookDescription[];
  nativeAPIs?: GroupVersionKind[];
  minKubeVersion?: string;
  displayName: string;
  description?: string;
  keywords?: string[];
  maintainers?: Maintainer[];
  provider?: AppLink;
  links?: AppLink[];
  icon?: Icon[];
  installModes?: InstallMode[];
  replaces?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  selector?: LabelSelector;
  cleanup?: CleanupSpec;
  skips?: string[];
  relatedImages?: RelatedImage[];
}

/** One entry of the CSV's phase history (`status.conditions`). */
export interface ClusterServiceVersionCondition {
  phase?: CSVPhase;
  message?: string;
  reason?: CSVReason;
  lastUpdateTime?: Time;
  lastTransitionTime?: Time;
}

export interface DependentStatus {
  group: string;
  version: string;
  kind: string;
  status: RequirementStatusReason;
  uuid?: string;
  message?: string;
}

export interface RequirementStatus {
  group: string;
  version: string;
  kind: string;
  name: string;
  status: RequirementStatusReason;
  message: string;
  uuid?: string;
  dependents?: DependentStatus[];
}

export interface ResourceInstance {
  name: string;
  namespace?: string;
}

export interface ResourceList {
  group: string;
  kind: string;
  instances: ResourceInstance[];
}

export interface CleanupStatus {
  pendingDeletion?: ResourceList[];
}

export interface ClusterServiceVersionStatus {
  phase?: CSVPhase;
  message?: string;
  reason?: CSVReason;
  lastUpdateTime?: Time;
  lastTransitionTime?: Time;
  conditions?: ClusterServiceVersionCondition[];
  requirementStatus?: RequirementStatus[];
  certsLastUpdated?: Time;
  certsRotateAt?: Time;
  cleanup?: CleanupStatus;
}

export type ClusterServiceVersion = OperatorsObject<
  'ClusterServiceVersion',
  ClusterServiceVersionSpec,
  ClusterServiceVersionStatus
>;

// ---------------------------------------------------------------------------------------------
// OperatorGroup (v1)

export const UpgradeStrategy = {
  Default: 'Default',
  UnsafeFailForward: 'TechPreviewUnsafeFailForward',
} as const;
export type UpgradeStrategy = (typeof UpgradeStrategy)[keyof typeof UpgradeStrategy];

export interface OperatorGroupSpec {
  selector?: LabelSelector;
  /** If set, `selector` is ignored. Neither set means all namespaces. */
  targetNamespaces?: string[];
  serviceAccountName?: string;
  staticProvidedAPIs?: boolean;
  upgradeStrategy?: UpgradeStrategy;
}

export interface OperatorGroupStatus {
  namespaces?: string[];
  serviceAccountRef?: ObjectReference;
  lastUpdated: Time;
  conditions?: Condition[];
}

/** `spec` may be left out entirely: an OperatorGroup with no spec targets all namespaces. */
export type OperatorGroup = Omit<
  OperatorsObject<'OperatorGroup', OperatorGroupSpec, OperatorGroupStatus>,
  'spec'
> & { spec?: OperatorGroupSpec };

// ---------------------------------------------------------------------------------------------
// OperatorCondition (v2)

/**
 * A condition an administrator sets in `spec.overrides`: OLM's CRD lets it leave out
 * `lastTransitionTime`, and OLM's documented examples do.
 */
export type ConditionOverride = Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: Time };

export interface OperatorConditionSpec {
  serviceAccounts?: string[];
  deployments?: string[];
  /** Set by cluster admins; wins over what the operator reports in `conditions`. */
  overrides?: ConditionOverride[];
  /** Set by the operator itself. */
  conditions?: Condition[];
}

export interface OperatorConditionStatus {
  conditions?: Condition[];
}

export type OperatorCondition = Omit<
  OperatorsObject<'OperatorCondition', OperatorConditionSpec, OperatorConditionStatus>,
  'spec'
> & { spec?: OperatorConditionSpec };

// ---------------------------------------------------------------------------------------------
// Operator (v1, cluster-scoped)

/**
 * An Operator has no settings: it is named `<package>.<namespace>` and lists, in its status, every
 * object labelled `operators.coreos.com/<package>.<namespace>` (see src/install/operator-components.ts).
 */
export type OperatorSpec = Record<string, never>;

/** The state of one component, as its own status says it (a CSV's is its phase). */
export interface ComponentCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastUpdateTime?: Time;
  lastTransitionTime?: Time;
}

/** A component of an operator: an object reference with the object's conditions. */
export interface RichReference extends ObjectReference {
  conditions?: ComponentCondition[];
}

export interface OperatorComponents {
  /** Selects the components: the operator's component label exists. */
  labelSelector: LabelSelector;
  refs?: RichReference[];
}

export interface OperatorStatus {
  components?: OperatorComponents;
}

export type Operator = Omit<OperatorsObject<'Operator', OperatorSpec, OperatorStatus>, 'spec'> & {
  spec?: OperatorSpec;
};
