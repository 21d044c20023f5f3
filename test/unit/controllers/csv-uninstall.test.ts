import { describe, expect, it } from 'vitest';
import type { InstallPlan, Subscription } from '../../../src/apis/operators.js';
import { reinstalling } from '../../../src/controllers/csv-uninstall.js';

const V1 = 'bosun-sample.v0.1.1';
const V2 = 'bosun-sample.v0.2.1';

const plan = (csvs: string[], phase?: string): Pick<InstallPlan, 'spec' | 'status'> =>
  ({
    spec: { clusterServiceVersionNames: csvs, approval: 'Automatic', approved: true },
    ...(phase ? { status: { phase } } : {}),
  }) as Pick<InstallPlan, 'spec' | 'status'>;

const rollingBack = (phase: string, from: string, to: string): Pick<Subscription, 'status'> =>
  ({
    status: { rollback: { phase, from, to, cause: 'test', startedAt: '2026-11-26T00:00:00Z' } },
  }) as Pick<Subscription, 'status'>;

describe('reinstalling: whether the cluster objects of a deleted CSV must stay', () => {
  it('a CSV nothing puts back is not being reinstalled (its cluster objects go)', () => {
    expect(reinstalling(V1, [], [])).toBe(false);
    expect(reinstalling(V1, [plan([V1], 'Complete'), plan([V1], 'Failed')], [])).toBe(false);
    expect(reinstalling(V1, [plan([V2], 'Installing')], [rollingBack('RolledBack', V2, V1)])).toBe(false);
  });

  it('an InstallPlan that installs it and has not finished keeps them (it applies RBAC before the CSV)', () => {
    for (const phase of [undefined, 'Planning', 'RequiresApproval', 'Installing'])
      expect(reinstalling(V1, [plan(['dep.v1', V1], phase)], []), String(phase)).toBe(true);
  });

  it('a rollback under way back to it keeps them, before its InstallPlan is made and after it completed', () => {
    expect(reinstalling(V1, [], [rollingBack('RollingBack', V2, V1)])).toBe(true);
    expect(reinstalling(V1, [plan([V1], 'Complete')], [rollingBack('RollingBack', V2, V1)])).toBe(true);
    // The version rolled back from is not put back: its objects go.
    expect(reinstalling(V2, [], [rollingBack('RollingBack', V2, V1)])).toBe(false);
    // A rollback refused or finished puts nothing back.
    expect(reinstalling(V1, [], [rollingBack('Refused', V2, V1)])).toBe(false);
  });
});
