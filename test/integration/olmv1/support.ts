/**
 * What the ClusterExtension test files share: a namespace to install into, and waiting for an
 * extension's status with enough of the install shown to tell why when it never comes.
 */
import { type ClusterExtension, V1Resources } from '../../../src/apis/olmv1.js';
import { type ClusterServiceVersion, type InstallPlan, Resources } from '../../../src/apis/operators.js';
import { clusterAdminServiceAccount, get, list } from '../controllers/support.js';
import { eventually, freshNamespace } from '../support.js';

/**
 * A fresh namespace with the ServiceAccount `installer`, bound to cluster-admin as OLM v1's
 * tutorials bind theirs.
 */
export async function extensionNamespace(prefix: string): Promise<string> {
  const ns = await freshNamespace(prefix);
  await clusterAdminServiceAccount(ns, 'installer');
  return ns;
}

/**
 * The extension once `test` holds; if it never does, the error shows its last status and the
 * InstallPlans and CSVs of its namespace.
 */
export async function extensionWhen<T extends ClusterExtension = ClusterExtension>(
  name: string,
  test: (ext: T) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  let last: T | undefined;
  try {
    return await eventually(
      what,
      async () => {
        last = await get<T>(V1Resources.ClusterExtension, '', name);
        return last && test(last) ? last : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    const ns = last?.spec?.namespace ?? '';
    const plans = ns ? await list<InstallPlan>(Resources.InstallPlan, ns) : [];
    const csvs = ns ? await list<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns) : [];
    const seen = {
      status: last?.status,
      plans: plans.map((p) => [p.spec.clusterServiceVersionNames, p.status?.phase, p.status?.message]),
      csvs: csvs.map((c) => [c.metadata.name, c.status?.phase, c.status?.message]),
    };
    throw new Error(`${(err as Error).message}; last seen: ${JSON.stringify(seen)}`, { cause: err });
  }
}
