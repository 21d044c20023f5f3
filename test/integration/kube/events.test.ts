import { describe, expect, it } from 'vitest';
import { EventRecorder } from '../../../src/kube/events.js';
import { freshNamespace } from '../support.js';
import { connect } from './helpers.js';

interface CoreEvent {
  metadata: { name: string; namespace: string };
  involvedObject: { kind: string; name: string; namespace?: string; uid: string };
  type: string;
  reason: string;
  message: string;
  count: number;
  source: { component: string };
  reportingComponent: string;
}

describe('EventRecorder', () => {
  it('writes core/v1 Events for an object and counts repeats instead of adding more', async () => {
    const { applier, client } = connect();
    const errors: unknown[] = [];
    const recorder = new EventRecorder({ client, instance: 'test', onError: (e) => errors.push(e) });
    const ns = await freshNamespace('events');
    const cm = await applier.apply<{
      apiVersion: string;
      kind: string;
      metadata: { name: string; namespace: string; uid?: string };
    }>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: ns },
    });

    await recorder.normal(cm, 'RequirementsUnknown', 'requirements not yet checked');
    await recorder.normal(cm, 'RequirementsUnknown', 'requirements not yet checked');
    await recorder.warning(cm, 'RequirementsNotMet', 'one or more requirements could not be found');

    const { items } = await client.request<{ items: CoreEvent[] }>({
      path: `/api/v1/namespaces/${ns}/events`,
    });
    const summary = items
      .map((e) => ({
        involved: `${e.involvedObject.kind}/${e.involvedObject.name}@${e.involvedObject.uid}`,
        type: e.type,
        reason: e.reason,
        message: e.message,
        count: e.count,
        component: `${e.source.component}/${e.reportingComponent}`,
      }))
      .sort((a, b) => a.reason.localeCompare(b.reason));
    expect(summary).toEqual([
      {
        involved: `ConfigMap/settings@${cm.metadata.uid}`,
        type: 'Warning',
        reason: 'RequirementsNotMet',
        message: 'one or more requirements could not be found',
        count: 1,
        component: 'bosun/bosun',
      },
      {
        involved: `ConfigMap/settings@${cm.metadata.uid}`,
        type: 'Normal',
        reason: 'RequirementsUnknown',
        message: 'requirements not yet checked',
        count: 2,
        component: 'bosun/bosun',
      },
    ]);
    expect(errors).toEqual([]);
    client.close();
  });

  it('puts events about cluster-scoped objects in the default namespace', async () => {
    const { client } = connect();
    const recorder = new EventRecorder({ client, instance: 'test' });
    const ns = await freshNamespace('clusterscoped');
    const namespace = await client.request<{
      apiVersion: string;
      kind: string;
      metadata: { name: string; uid: string };
    }>({
      path: `/api/v1/namespaces/${ns}`,
    });
    await recorder.normal(
      { ...namespace, apiVersion: 'v1', kind: 'Namespace' },
      'Observed',
      `namespace ${ns} seen`,
    );
    const { items } = await client.request<{ items: CoreEvent[] }>({
      path: '/api/v1/namespaces/default/events',
      query: { fieldSelector: `involvedObject.name=${ns}` },
    });
    expect(items.map((e) => [e.involvedObject.kind, e.reason, e.message])).toEqual([
      ['Namespace', 'Observed', `namespace ${ns} seen`],
    ]);
    client.close();
  });

  it('reports a failure instead of throwing', async () => {
    const { client } = connect();
    const errors: unknown[] = [];
    const recorder = new EventRecorder({ client, onError: (e) => errors.push(e) });
    await recorder.normal(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'no-such-namespace-bosun' } },
      'Test',
      'x',
    );
    expect(errors).toHaveLength(1);
    client.close();
  });
});
