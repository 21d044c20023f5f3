import { ApiError } from '../../../src/kube/client.js';
import { describe, expect, it } from 'vitest';
import {
  accessRefusal,
  formatApiError,
  fromStatus,
  isAlreadyExists,
  isConflict,
  isGone,
  isNamespaceTerminating,
  isNotFound,
  isPermanentRejection,
  parseApiError,
} from '../../../src/kube/errors.js';

const status = (code: number, reason: string, message: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message, ...extra });

describe('parseApiError', () => {
  it.each([
    [
      'a Status body as raw text',
      new ApiError(
        404,
        'Unsuccessful HTTP Request',
        status(404, 'NotFound', 'subscriptions "x" not found'),
        {},
      ),
      { code: 404, reason: 'NotFound', message: 'subscriptions "x" not found' },
    ],
    [
      'a conflict on update',
      new ApiError(
        409,
        'Unsuccessful HTTP Request',
        status(409, 'Conflict', 'the object has been modified'),
        {},
      ),
      { code: 409, reason: 'Conflict', message: 'the object has been modified' },
    ],
    [
      'a plain-text body (no Status)',
      new ApiError(404, 'Unsuccessful HTTP Request', '404 page not found\n', {}),
      { code: 404, reason: 'NotFound', message: '404 page not found' },
    ],
    [
      'an empty body',
      new ApiError(503, 'Unsuccessful HTTP Request', '', {}),
      { code: 503, reason: 'ServiceUnavailable', message: 'HTTP 503' },
    ],
    [
      'a Status without a reason',
      new ApiError(500, 'x', status(500, '', 'etcd is down'), {}),
      { code: 500, reason: 'InternalError', message: 'etcd is down' },
    ],
    [
      'a watch failure with statusCode',
      Object.assign(new Error('Forbidden'), { statusCode: 403 }),
      { code: 403, reason: 'Forbidden', message: 'Forbidden' },
    ],
    [
      'an already parsed body',
      Object.assign(new Error('x'), {
        code: 409,
        body: { kind: 'Status', code: 409, reason: 'AlreadyExists', message: 'exists' },
      }),
      { code: 409, reason: 'AlreadyExists', message: 'exists' },
    ],
    [
      'a code the table does not know',
      new ApiError(418, 'x', 'teapot', {}),
      { code: 418, reason: 'Unknown', message: 'teapot' },
    ],
  ])('reads %s', (_, err, expected) => {
    expect(parseApiError(err)).toEqual(expected);
  });

  it('keeps the field causes of an Invalid error', () => {
    const body = status(422, 'Invalid', 'Subscription.operators.coreos.com "s" is invalid', {
      details: {
        causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.source' }],
      },
    });
    const parsed = parseApiError(new ApiError(422, 'x', body, {}))!;
    expect(parsed.causes).toEqual([
      { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.source' },
    ]);
    expect(formatApiError(parsed)).toBe(
      'Invalid (422): Subscription.operators.coreos.com "s" is invalid; spec.source: Required value',
    );
  });

  it.each([
    [
      'a network error',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' }),
    ],
    ['a bug', new TypeError('x is undefined')],
    ['a string', 'oops'],
    ['undefined', undefined],
  ])('returns undefined for %s', (_, err) => {
    expect(parseApiError(err)).toBeUndefined();
  });

  it('reads the Status of a watch ERROR event', () => {
    const event = {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 410,
      reason: 'Expired',
      message: 'too old resource version: 1 (5)',
    };
    expect(fromStatus(event)).toEqual({
      code: 410,
      reason: 'Expired',
      message: 'too old resource version: 1 (5)',
    });
    expect(isGone(event)).toBe(true);
  });

  it('answers the common questions', () => {
    const notFound = new ApiError(404, 'x', status(404, 'NotFound', 'nope'), {});
    const exists = new ApiError(409, 'x', status(409, 'AlreadyExists', 'exists'), {});
    const conflict = new ApiError(409, 'x', status(409, 'Conflict', 'modified'), {});
    expect([isNotFound(notFound), isNotFound(exists), isNotFound(new Error('x'))]).toEqual([
      true,
      false,
      false,
    ]);
    expect([isAlreadyExists(exists), isConflict(exists)]).toEqual([true, false]);
    expect([isConflict(conflict), isAlreadyExists(conflict)]).toEqual([true, false]);
    expect(isGone(new ApiError(410, 'x', '', {}))).toBe(true);
  });
});

describe('isNamespaceTerminating', () => {
  it('is the Forbidden whose cause is NamespaceTerminating, not any Forbidden', () => {
    const terminating = new ApiError(
      403,
      'x',
      status(
        403,
        'Forbidden',
        'unable to create new content in namespace ns because it is being terminated',
        {
          details: { causes: [{ reason: 'NamespaceTerminating', field: 'metadata.namespace' }] },
        },
      ),
      {},
    );
    const rbac = new ApiError(403, 'x', status(403, 'Forbidden', 'cannot create'), {});
    expect([isNamespaceTerminating(terminating), isNamespaceTerminating(rbac)]).toEqual([true, false]);
  });
});

describe('isPermanentRejection', () => {
  it.each([
    [{ code: 422, reason: 'Invalid', message: 'spec.ports[0].port: Invalid value' }, true],
    [{ code: 403, reason: 'Forbidden', message: 'forbidden' }, true],
    [{ code: 400, reason: 'BadRequest', message: 'bad' }, true],
    [{ code: 500, reason: 'InternalError', message: '.spec.bogus: field not declared in schema' }, true],
    [{ code: 500, reason: 'InternalError', message: 'etcdserver: request timed out' }, false],
    [{ code: 409, reason: 'Conflict', message: 'the object has been modified' }, false],
    [{ code: 429, reason: 'TooManyRequests', message: 'storage is (re)initializing' }, false],
  ])('%j is permanent: %s', (err, permanent) => {
    expect(isPermanentRejection(err)).toBe(permanent);
  });
});

describe('accessRefusal', () => {
  const forbidden =
    'customresourcedefinitions.apiextensions.k8s.io "catalogsources.operators.coreos.com" is forbidden: User "system:serviceaccount:olm:bosun-manager" cannot get resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope';

  it('gives a 403 or 401 from the API server in its own words, naming the missing permission', () => {
    expect(accessRefusal(new ApiError(403, 'Forbidden', status(403, 'Forbidden', forbidden), {}))).toBe(
      `the Kubernetes API server refused a request: Forbidden (403): ${forbidden}`,
    );
    expect(
      accessRefusal(new ApiError(401, 'Unauthorized', status(401, 'Unauthorized', 'Unauthorized'), {})),
    ).toBe('the Kubernetes API server refused a request: Unauthorized (401): Unauthorized');
  });

  it.each([
    ['a 404', new ApiError(404, 'Not Found', status(404, 'NotFound', 'x not found'), {})],
    ['a 409', new ApiError(409, 'Conflict', status(409, 'Conflict', 'modified'), {})],
    ['a 500', new ApiError(500, 'Internal Server Error', 'etcd', {})],
    ['a network failure', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
    ['a bug', new TypeError('x is undefined')],
  ])('leaves %s alone', (_what, err) => {
    expect(accessRefusal(err)).toBeUndefined();
  });
});
