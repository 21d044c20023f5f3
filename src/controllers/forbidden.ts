/**
 * A reconcile the API server refused with 403 Forbidden is reported on the object it reconciles:
 * a Warning Event with reason `Forbidden` (the API server's own Status reason; OLM v0 has no
 * reason of its own for a refused request outside an InstallPlan's steps) carrying the API
 * server's message, which names the user, the verb, the resource, its API group and the
 * namespace. The reconcile still fails, so it is retried with backoff as before: a permission an
 * admin grants meanwhile is picked up without a restart.
 *
 * Without this, a missing rule in the manager's ClusterRole showed only as a retried reconcile in
 * the manager's log, and the object waited with no word on it (`kubectl describe` showed
 * nothing). The recorder counts repeats of the same Event, so retries do not flood the namespace.
 *
 * A namespace being deleted also answers 403 (NamespaceTerminating): that is no missing
 * permission, and the manager drops such reconciles itself.
 */
import type { KubeObject } from '../apis/meta.js';
import type { EventRecorder } from '../kube/events.js';
import { isNamespaceTerminating, parseApiError, StatusReason } from '../kube/errors.js';
import type { Reconcile } from '../kube/workqueue.js';
import type { Controller, InformerName, PortName, ScopedContext } from './context.js';

export const ForbiddenReason = StatusReason.Forbidden;

/**
 * The Event's message for a refusal: the API server's message as it wrote it, prefixed with
 * what the manager was doing when it was refused. Undefined when `err` is no Forbidden.
 */
export function forbiddenMessage(err: unknown, doing: string): string | undefined {
  const api = parseApiError(err);
  if (api === undefined || api.reason !== StatusReason.Forbidden || isNamespaceTerminating(err)) {
    return undefined;
  }
  const said = api.message.trim() === '' ? `HTTP ${api.code}` : api.message.trim();
  return `${doing}: the API server refused a request of the manager (grant it in the manager's ClusterRole): ${said}`;
}

/**
 * `reconcile` reporting each Forbidden it throws on the objects `objectsOf(key)` names (the object
 * of the key, or each object of a namespace for a controller keyed by namespace), then rethrowing.
 */
export function reportForbidden(
  events: Pick<EventRecorder, 'warning'>,
  kind: string,
  objectsOf: (key: string) => readonly KubeObject[],
  reconcile: Reconcile,
): Reconcile {
  return async (key) => {
    try {
      return await reconcile(key);
    } catch (err) {
      const message = forbiddenMessage(err, `reconciling ${kind} ${key}`);
      if (message !== undefined) {
        for (const obj of objectsOf(key)) await events.warning(obj, ForbiddenReason, message);
      }
      throw err;
    }
  };
}

/**
 * `controller` with its reconciles reporting Forbidden on the objects reconciled, which
 * `objectsOf` finds in the controller's own informers (not from the API server: reading them may
 * be what is forbidden). It is given the `events` port besides what it declared.
 */
export function reportingForbidden<I extends InformerName, P extends PortName>(
  controller: Controller<I, P>,
  objectsOf: (ctx: ScopedContext<I, P | 'events'>, key: string) => readonly KubeObject[],
): Controller<I, P | 'events'> {
  const ports: readonly (P | 'events')[] = controller.ports.includes('events' as P)
    ? controller.ports
    : [...controller.ports, 'events'];
  return {
    ...controller,
    ports,
    reconcile: (ctx) =>
      reportForbidden(
        ctx.events,
        controller.kind ?? controller.name,
        (key) => objectsOf(ctx, key),
        controller.reconcile(ctx),
      ),
  };
}
