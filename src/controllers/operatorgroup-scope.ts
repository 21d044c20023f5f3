/**
 * Whom the writes of an install are made as, for the InstallPlan controller (its steps) and the
 * CSV controller (what it applies for a CSV): the manager, or, when the namespace's OperatorGroup
 * names a ServiceAccount, that ServiceAccount, impersonated (src/install/scoped-install.ts says
 * why). Reads stay the manager's. A scope that cannot be used (several groups, or a
 * ServiceAccount that does not exist) writes nothing: impersonating a ServiceAccount that is gone
 * would still work wherever RoleBindings to its name were left behind.
 */
import type { KubeObject } from '../apis/meta.js';
import { type InstallScope, installScope } from '../install/scoped-install.js';
import type { Applier } from '../kube/apply.js';
import { type KubeClient, objectPath } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { Builtin } from '../kube/resources.js';
import type { Informers } from './context.js';

/** What an install's objects are written with. */
export interface Writer {
  /** Applies as the scope's user. */
  applier: Applier;
  /** Writes (merge patches) as the scope's user. */
  client: KubeClient;
}

export type InstallWriter =
  | ({ kind: 'go'; scope: Exclude<InstallScope, { kind: 'invalid' }> } & Writer)
  /** Nothing can be written until the namespace's OperatorGroup or ServiceAccount changes. */
  | { kind: 'wait'; message: string };

export async function installWriter(
  ctx: { informers: Pick<Informers, 'operatorGroups'>; applier: Applier; client: KubeClient },
  namespace: string,
): Promise<InstallWriter> {
  const scope = installScope(ctx.informers.operatorGroups.list(namespace), namespace);
  if (scope.kind === 'cluster') return { kind: 'go', scope, applier: ctx.applier, client: ctx.client };
  if (scope.kind === 'invalid') return { kind: 'wait', message: scope.message };
  try {
    await ctx.client.request<KubeObject>({ path: objectPath(Builtin.ServiceAccount, scope.name, namespace) });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    return {
      kind: 'wait',
      message: `ServiceAccount ${namespace}/${scope.name}, which OperatorGroup ${scope.operatorGroup} installs as, does not exist; nothing is installed until it does`,
    };
  }
  const as = { user: scope.user };
  return { kind: 'go', scope, applier: ctx.applier.impersonating(as), client: ctx.client.impersonating(as) };
}
