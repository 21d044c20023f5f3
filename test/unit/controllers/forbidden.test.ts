/**
 * A reconcile refused with 403 Forbidden is reported on the object reconciled (a Warning Event,
 * reason Forbidden, with the API server's message naming the permission) and still fails for a
 * retry; other failures, and a namespace being deleted, are not reported as missing permissions.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import { ForbiddenReason, forbiddenMessage, reportForbidden } from '../../../src/controllers/forbidden.js';
import { ApiError } from '../../../src/kube/client.js';

const refusal =
  'catalogsources.operators.coreos.com "cat" is forbidden: User "system:serviceaccount:olm:bosun-manager" ' +
  'cannot update resource "catalogsources/status" in API group "operators.coreos.com" in the namespace "ns1"';

const status = (code: number, reason: string, message: string, causes?: unknown[]) =>
  JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code,
    reason,
    message,
    ...(causes ? { details: { causes } } : {}),
  });

const forbidden = new ApiError(403, 'Forbidden', status(403, 'Forbidden', refusal), {});
const cs: KubeObject = {
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'CatalogSource',
  metadata: { name: 'cat', namespace: 'ns1', uid: 'u1' },
};

function recorder() {
  const recorded: { obj: KubeObject; reason: string; message: string }[] = [];
  return {
    recorded,
    events: {
      warning: (obj: KubeObject, reason: string, message: string) => {
        recorded.push({ obj, reason, message });
        return Promise.resolve();
      },
    },
  };
}

describe('reportForbidden', () => {
  it('records a Forbidden Warning naming the refused permission on the object, and rethrows', async () => {
    const { recorded, events } = recorder();
    const reconcile = reportForbidden(
      events,
      'CatalogSource',
      () => [cs],
      () => Promise.reject(forbidden),
    );
    await expect(reconcile('ns1/cat')).rejects.toBe(forbidden);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]!.obj).toBe(cs);
    expect(recorded[0]!.reason).toBe(ForbiddenReason);
    expect(recorded[0]!.message).toContain('reconciling CatalogSource ns1/cat');
    expect(recorded[0]!.message).toContain(refusal);
  });

  it('reports on every object a namespace-keyed reconcile stands for', async () => {
    const { recorded, events } = recorder();
    const subs = ['a', 'b'].map((name) => ({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'Subscription',
      metadata: { name, namespace: 'ns1' },
    }));
    const reconcile = reportForbidden(
      events,
      'Subscription',
      () => subs,
      () => Promise.reject(forbidden),
    );
    await expect(reconcile('ns1')).rejects.toBe(forbidden);
    expect(recorded.map((r) => r.obj.metadata?.name)).toEqual(['a', 'b']);
  });

  it.each([
    [
      'a Conflict',
      new ApiError(409, 'Conflict', status(409, 'Conflict', 'the object has been modified'), {}),
    ],
    ['a NotFound', new ApiError(404, 'Not Found', status(404, 'NotFound', 'not found'), {})],
    ['an Invalid', new ApiError(422, 'Unprocessable', status(422, 'Invalid', 'spec.x: Required value'), {})],
    ['a network failure', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
    ['a bug', new TypeError('x is undefined')],
    [
      'a refusal in a namespace being deleted',
      new ApiError(
        403,
        'Forbidden',
        status(
          403,
          'Forbidden',
          'unable to create new content in namespace ns1 because it is being terminated',
          [{ reason: 'NamespaceTerminating', message: 'namespace ns1 is being terminated' }],
        ),
        {},
      ),
    ],
  ])('does not report %s as a missing permission, and still fails', async (_, err) => {
    const { recorded, events } = recorder();
    const reconcile = reportForbidden(
      events,
      'CatalogSource',
      () => [cs],
      () => Promise.reject(err),
    );
    await expect(reconcile('ns1/cat')).rejects.toBe(err);
    expect(recorded).toEqual([]);
  });

  it('records nothing when the reconcile succeeds, and passes its result on', async () => {
    const { recorded, events } = recorder();
    const reconcile = reportForbidden(
      events,
      'CatalogSource',
      () => [cs],
      () => Promise.resolve({ requeueAfter: 5 }),
    );
    await expect(reconcile('ns1/cat')).resolves.toEqual({ requeueAfter: 5 });
    expect(recorded).toEqual([]);
  });
});

describe('forbiddenMessage', () => {
  it.each([
    ['a Status body', forbidden, refusal],
    // A 403 from something in front of the API server may have a plain-text body.
    ['a plain-text body', new ApiError(403, 'Forbidden', 'denied by proxy', {}), 'denied by proxy'],
    ['an empty body', new ApiError(403, 'Forbidden', '', {}), 'HTTP 403'],
  ])('keeps what the API server said, from %s', (_, err, said) => {
    expect(forbiddenMessage(err, 'reconciling X a/b')).toBe(
      `reconciling X a/b: the API server refused a request of the manager (grant it in the manager's ClusterRole): ${said}`,
    );
  });
});
