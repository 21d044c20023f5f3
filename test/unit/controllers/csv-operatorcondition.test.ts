import { describe, expect, it } from 'vitest';
import { effectiveConditions, upgradeBlocked } from '../../../src/controllers/operatorcondition.js';

const cond = (type: string, status: 'True' | 'False', reason = 'R') => ({
  type,
  status,
  reason,
  message: '',
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

describe('effectiveConditions', () => {
  it('mirrors the operator’s conditions', () => {
    expect(effectiveConditions({ conditions: [cond('Upgradeable', 'True')] })).toEqual([
      cond('Upgradeable', 'True'),
    ]);
  });

  it('an override replaces the operator’s condition of the same type in place, others are appended', () => {
    const spec = {
      conditions: [cond('Upgradeable', 'True'), cond('Other', 'True')],
      overrides: [cond('Upgradeable', 'False', 'Admin'), cond('Extra', 'True')],
    };
    expect(effectiveConditions(spec)).toEqual([
      cond('Upgradeable', 'False', 'Admin'),
      cond('Other', 'True'),
      cond('Extra', 'True'),
    ]);
  });

  it('no spec means no conditions', () => {
    expect(effectiveConditions(undefined)).toEqual([]);
  });

  it('an override without lastTransitionTime keeps the time of an unchanged condition, or gets now', () => {
    const { lastTransitionTime: _, ...untimed } = cond('Upgradeable', 'False', 'Admin');
    const previous = [
      { ...cond('Upgradeable', 'False', 'Admin'), lastTransitionTime: '2026-02-02T00:00:00Z' },
    ];
    const now = '2026-03-03T00:00:00Z';
    expect(effectiveConditions({ overrides: [untimed] }, previous, now)).toEqual(previous);
    expect(effectiveConditions({ overrides: [{ ...untimed, status: 'True' }] }, previous, now)).toEqual([
      { ...untimed, status: 'True', lastTransitionTime: now },
    ]);
    expect(effectiveConditions({ overrides: [untimed] }, [], now)).toEqual([
      { ...untimed, lastTransitionTime: now },
    ]);
  });
});

describe('upgradeBlocked', () => {
  const oc = (spec: object) =>
    ({ metadata: { name: 'op.v1' }, spec }) as Parameters<typeof upgradeBlocked>[0];
  it('is the operator’s Upgradeable=False, with its message', () => {
    const c = { ...cond('Upgradeable', 'False', 'Migrating'), message: 'a migration is running' };
    expect(upgradeBlocked(oc({ conditions: [c] }))).toBe(
      'the operator is not upgradeable: a migration is running',
    );
  });
  it('an admin’s override wins, either way', () => {
    const blocked = cond('Upgradeable', 'False', 'Migrating');
    const allowed = cond('Upgradeable', 'True', 'Admin');
    expect(upgradeBlocked(oc({ conditions: [blocked], overrides: [allowed] }))).toBeUndefined();
    expect(upgradeBlocked(oc({ conditions: [allowed], overrides: [blocked] }))).toContain('Migrating');
  });
  it('nothing blocks without a False Upgradeable', () => {
    expect(upgradeBlocked(undefined)).toBeUndefined();
    expect(upgradeBlocked(oc({ conditions: [cond('Upgradeable', 'True')] }))).toBeUndefined();
    expect(upgradeBlocked(oc({ conditions: [cond('Other', 'False')] }))).toBeUndefined();
  });
});
