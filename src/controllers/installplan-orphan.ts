/**
 * Whether an InstallPlan's Subscription is still there. The Subscription controller makes each
 * plan owned by its Subscription (a non-blocking ownerReference, as OLM's catalog operator does),
 * so deleting the Subscription lets the garbage collector delete the plan. That takes a moment,
 * and a plan already running (or approved and about to run) would otherwise go on and create its
 * CSV after the user removed the Subscription and the CSV: OLM has that race, and the HA soak
 * found a CSV and its Deployment back in a namespace it had unsubscribed. An unsubscribe is
 * final, so the InstallPlan controller asks the API server (not its cache, which lags) whether
 * the plan's Subscription still exists before it runs the plan, and again right after it has
 * created the CSV.
 *
 * Pure decision (`orphanedBy`) apart from the reads (`goneSubscription`).
 */
import type { OwnerReference } from '../apis/meta.js';
import { type InstallPlan, Resources, type Subscription } from '../apis/operators.js';
import type { KubeClient } from '../kube/client.js';
import { objectPath } from '../kube/client.js';
import { isConflict, isNotFound } from '../kube/errors.js';
import { getIfPresent } from './objects.js';

/** The Subscriptions a plan is for: its ownerReferences of kind Subscription. */
export function subscriptionOwners(ip: Pick<InstallPlan, 'metadata'>): OwnerReference[] {
  return (ip.metadata.ownerReferences ?? []).filter(
    (o) =>
      o.kind === Resources.Subscription.kind && o.apiVersion.startsWith(`${Resources.Subscription.group}/`),
  );
}

/**
 * Why the plan no longer has a Subscription to install for, or undefined while it has one. A plan
 * owned by no Subscription (made by hand) is never orphaned. One owned by Subscriptions is
 * orphaned once every one of them is gone: not found, found with another uid (deleted and made
 * again: the new one resolves on its own), or being deleted. `live` holds what the API server
 * returned for each owner's name (undefined: not found).
 */
export function orphanedBy(
  owners: readonly OwnerReference[],
  live: ReadonlyMap<string, Subscription | undefined>,
): string | undefined {
  if (owners.length === 0) return undefined;
  const why: string[] = [];
  for (const owner of owners) {
    const sub = live.get(owner.name);
    if (sub === undefined) why.push(`Subscription ${owner.name} was deleted`);
    else if (sub.metadata.uid !== owner.uid)
      why.push(
        `Subscription ${owner.name} was deleted (the one there now, uid ${sub.metadata.uid}, is another)`,
      );
    else if (sub.metadata.deletionTimestamp) why.push(`Subscription ${owner.name} is being deleted`);
    else return undefined;
  }
  return why.join('; ');
}

/**
 * Reads the plan's Subscriptions from the API server and says why the plan is orphaned, or
 * undefined while one of them is still there.
 */
export async function goneSubscription(
  client: KubeClient,
  ip: Pick<InstallPlan, 'metadata'>,
): Promise<string | undefined> {
  const owners = subscriptionOwners(ip);
  if (owners.length === 0) return undefined;
  const namespace = ip.metadata.namespace ?? '';
  const live = new Map<string, Subscription | undefined>();
  for (const name of new Set(owners.map((o) => o.name)))
    live.set(
      name,
      await getIfPresent<Subscription>(client, objectPath(Resources.Subscription, name, namespace)),
    );
  return orphanedBy(owners, live);
}

/** The uid of the CSV `name` as the API server has it now, or undefined when there is none. */
export async function liveUid(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<string | undefined> {
  const csv = await getIfPresent<{ metadata?: { uid?: string } }>(
    client,
    objectPath(Resources.ClusterServiceVersion, name, namespace),
  );
  return csv?.metadata?.uid;
}

/**
 * Deletes the CSV this plan has just created, only that one (a uid precondition: a CSV made since
 * by someone else stays). Its Deployments and the plan's namespaced objects, which already have
 * their ownerReference to it, go with it through garbage collection.
 */
export async function deleteCreatedCSV(
  client: KubeClient,
  namespace: string,
  name: string,
  uid: string,
): Promise<void> {
  try {
    await client.request({
      method: 'DELETE',
      path: objectPath(Resources.ClusterServiceVersion, name, namespace),
      body: {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        preconditions: { uid },
        propagationPolicy: 'Background',
      },
    });
  } catch (err) {
    if (!isNotFound(err) && !isConflict(err)) throw err;
  }
}
