/**
 * The Deployments a CSV's install strategy runs, rendered as OLM renders them
 * (pkg/controller/install/deployment.go, `deploymentForSpec`), in this order:
 * 0. for a Deployment that serves webhooks or API services, its serving certificate mounted
 *    (./serving.ts, `mountServingCertificate`);
 * 1. the pod template's annotations, overlaid with the CSV's annotations (which include the
 *    OperatorGroup's `olm.operatorGroup`, `olm.operatorNamespace`, `olm.targetNamespaces`), so an
 *    operator can read its targets through the downward API;
 * 2. the Deployment's labels: the strategy's `label` map, then the owner labels;
 * 3. a non-blocking ownerReference to the CSV;
 * 4. the Subscription's `spec.config` (./subscription-config.ts);
 * 5. `OPERATOR_CONDITION_NAME=<csv>` in every container, naming the operator's OperatorCondition;
 * 6. `revisionHistoryLimit: 1` (OLM never rolls back a Deployment, so old ReplicaSets only cost
 *    memory);
 * 7. the label `olm.deployment-spec-hash`: a hash of the resulting spec. Comparing it with the
 *    live Deployment's label tells the controller that the CSV, the OperatorGroup or the
 *    Subscription's config changed what the Deployment should be.
 */
import type { V1Deployment, V1DeploymentSpec } from '@kubernetes/client-node';
import type { ClusterServiceVersion, StrategyDeploymentSpec, SubscriptionConfig } from '../apis/operators.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import { installStrategyOf } from './csv.js';
import { shortHash } from './hash.js';
import { type OperatorGroupTargets, operatorGroupAnnotations } from './operatorgroup.js';
import { csvOwnerReference, DeploymentSpecHashLabel, ownerLabels } from './ownership.js';
import { type DeploymentCertificate, mountServingCertificate } from './serving.js';
import { applySubscriptionConfig, mergeEnv } from './subscription-config.js';

/** The environment variable that names an operator's OperatorCondition. */
export const OperatorConditionNameEnv = 'OPERATOR_CONDITION_NAME';

export interface DeploymentInput {
  /** The CSV as it is on the cluster: name, namespace and, once it exists, uid. */
  csv: ClusterServiceVersion;
  /**
   * The OperatorGroup's targets. When given, their annotations overlay the CSV's, so a
   * Deployment is right even before the CSV itself has been annotated.
   */
  targets?: OperatorGroupTargets;
  /** The owning Subscription's `spec.config`. */
  config?: SubscriptionConfig;
  /**
   * The serving certificate of each Deployment that serves webhooks or API services, by
   * Deployment name: mounted into its pods before anything else is applied (./serving.ts).
   */
  servingCertificates?: Readonly<Record<string, DeploymentCertificate>>;
}

export function renderDeployments(input: DeploymentInput): Result<V1Deployment[]> {
  const { csv } = input;
  const name = csv.metadata?.name;
  const namespace = csv.metadata?.namespace;
  const object = `ClusterServiceVersion/${name ?? '?'}`;
  const problems: Problem[] = [];
  if (!name) problems.push({ object, field: 'metadata.name', message: 'must be set' });
  if (!namespace) problems.push({ object, field: 'metadata.namespace', message: 'must be set' });
  const strategy = installStrategyOf(csv, object);
  if (!strategy.ok) problems.push(...strategy.errors);
  if (!strategy.ok || problems.length > 0) return fail(problems);
  return ok(strategy.value.deployments.map((s) => renderDeployment(s, input)));
}

export function renderDeployment(strategy: StrategyDeploymentSpec, input: DeploymentInput): V1Deployment {
  const { csv } = input;
  const csvName = csv.metadata.name as string;
  const namespace = csv.metadata.namespace as string;
  const cert = input.servingCertificates?.[strategy.name];
  const spec = cert ? mountServingCertificate(strategy.spec, cert) : structuredClone(strategy.spec);

  const template = spec.template;
  template.metadata = {
    ...template.metadata,
    annotations: {
      ...template.metadata?.annotations,
      ...csv.metadata.annotations,
      ...(input.targets ? operatorGroupAnnotations(input.targets, namespace) : {}),
    },
  };

  const deployment: V1Deployment = applySubscriptionConfig(
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: strategy.name,
        namespace,
        labels: { ...strategy.label, ...ownerLabels({ name: csvName, namespace }) },
        // Known only once the CSV exists; the CSV controller renders from the live CSV.
        ...(csv.metadata.uid
          ? { ownerReferences: [csvOwnerReference({ name: csvName, uid: csv.metadata.uid })] }
          : {}),
      },
      spec,
    },
    input.config,
  );

  const final = deployment.spec as V1DeploymentSpec;
  final.template.spec = {
    ...final.template.spec,
    containers: (final.template.spec?.containers ?? []).map((c) => ({
      ...c,
      env: mergeEnv(c.env, [{ name: OperatorConditionNameEnv, value: csvName }]),
    })),
  };
  final.revisionHistoryLimit = 1;

  const labels = { ...deployment.metadata?.labels, [DeploymentSpecHashLabel]: deploymentSpecHash(final) };
  return { ...deployment, metadata: { ...deployment.metadata, labels } };
}

/** The hash of a Deployment spec, as the `olm.deployment-spec-hash` label carries it. */
export function deploymentSpecHash(spec: V1DeploymentSpec): string {
  return shortHash(spec, 16);
}
