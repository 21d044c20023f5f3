/**
 * Small API operations the install-side controllers share: reads that only ask whether an object
 * exists, merge patches of a few metadata fields, deletes that tolerate the object being gone
 * already, and cleanup of what a CSV owned by its owner labels.
 */
import type { KubeObject } from '../apis/meta.js';
import type { KubeClient } from '../kube/client.js';
import { collectionPath } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { Builtin } from '../kube/resources.js';

export const Rbac = {
  ClusterRole: Builtin.ClusterRole,
  ClusterRoleBinding: Builtin.ClusterRoleBinding,
  Role: Builtin.Role,
  RoleBinding: Builtin.RoleBinding,
} as const;

export const ServiceAccounts = Builtin.ServiceAccount;

type Resource = { group: string; version: string; plural: string; namespaced: boolean };

/** Whether the object at `path` exists (any error but NotFound is thrown: retry later). */
export async function exists(client: KubeClient, path: string): Promise<boolean> {
  try {
    await client.request({ path });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/**
 * A JSON merge patch. Used for the few fields a controller changes on an object whose spec is
 * applied by someone else's apply: a server-side apply of only those fields under the same field
 * manager would drop every other field that manager set before.
 */
export async function mergePatch<T>(client: KubeClient, path: string, body: unknown): Promise<T> {
  return client.request<T>({ method: 'PATCH', path, body, contentType: 'application/merge-patch+json' });
}

/** The object at `path` as the API server has it now, or undefined when there is none. */
export async function getIfPresent<T = KubeObject>(client: KubeClient, path: string): Promise<T | undefined> {
  try {
    return await client.request<T>({ path });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export async function deleteIfPresent(client: KubeClient, path: string): Promise<boolean> {
  try {
    await client.request({ method: 'DELETE', path, query: { propagationPolicy: 'Background' } });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/** Deletes every object of `resource` (in all namespaces) matching `labelSelector`; returns the names. */
export async function deleteByLabel(
  client: KubeClient,
  resource: Resource,
  labelSelector: string,
): Promise<string[]> {
  const list = await client.request<{ items?: KubeObject[] }>({
    path: collectionPath(resource),
    query: { labelSelector },
  });
  const deleted: string[] = [];
  for (const item of list.items ?? []) {
    const name = item.metadata?.name ?? '';
    const ns = item.metadata?.namespace;
    const path = `${collectionPath(resource, ns)}/${encodeURIComponent(name)}`;
    if (await deleteIfPresent(client, path)) deleted.push(ns ? `${ns}/${name}` : name);
  }
  return deleted;
}
