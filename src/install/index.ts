/**
 * Bundle → the exact Kubernetes objects an install applies, with OLM's semantics. Pure functions
 * over plain data (no client, no clock, no filesystem); the InstallPlan and CSV controllers call
 * them and do the applying.
 */
export {
  type BundleObject,
  classifyManifests,
  decodeBundle,
  type InstallableBundle,
  type RawManifest,
} from './bundle-objects.js';
export {
  type CSVObjects,
  type CSVObjectsInput,
  csvServiceAccounts,
  desiredCSVObjects,
  operatorConditionObjects,
} from './csv-objects.js';
export {
  type DeploymentInput,
  deploymentSpecHash,
  OperatorConditionNameEnv,
  renderDeployment,
  renderDeployments,
} from './deployments.js';
export { generatedName, shortHash, stableStringify } from './hash.js';
export {
  checkStrategy,
  type DeploymentHealth,
  deploymentHealth,
  HealthReason,
  HealthState,
  type StrategyCheck,
  StrategyCheckReason,
} from './health.js';
export { InstallableKinds, InstallPhase, kindInfo, type Resource } from '../olm/kinds.js';
export {
  AllNamespaces,
  installModeSupport,
  isAllNamespaces,
  type NamespaceInfo,
  type OperatorGroupTargets,
  operatorGroupAnnotations,
  operatorGroupNamespaces,
  parseTargetNamespaces,
  pickOperatorGroup,
  targetNamespacesAnnotation,
  type Verdict,
} from './operatorgroup.js';
export {
  addOwnerReference,
  CopiedFromLabel,
  type CSVIdentity,
  type CSVRef,
  csvOwnerReference,
  DeploymentSpecHashLabel,
  ownerLabels,
  ownerSelector,
} from './ownership.js';
export {
  type InstallStep,
  type InstallStepResource,
  ownInstallSteps,
  type PlanInput,
  planInstall,
  propertiesAnnotation,
  stepObject,
  stepPhase,
  stepsByPhase,
} from './plan.js';
export {
  NamespaceViewRule,
  planRbac,
  rbacApplyOrder,
  type RbacRef,
  staleRbac,
  targetedRbac,
} from './rbac.js';
export { matchesSelector } from '../olm/selector.js';
export { applySubscriptionConfig } from './subscription-config.js';
