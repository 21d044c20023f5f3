import { describe, expect, it } from 'vitest';
import { type CSVObservation, decideCSVPhase } from '../../../src/controllers/csv-phase.js';
import type { StrategyCheck } from '../../../src/install/health.js';

const installed: StrategyCheck = { installed: true };
const missing: StrategyCheck = {
  installed: false,
  reason: 'ComponentMissing',
  deployment: 'op',
  message: 'missing deployment with name=op',
  unrecoverable: false,
  needsApply: true,
};
const waiting: StrategyCheck = {
  installed: false,
  reason: 'Waiting',
  deployment: 'op',
  message: 'waiting for deployment op to become ready',
  unrecoverable: false,
  needsApply: false,
};
const updated: StrategyCheck = { ...missing, reason: 'DeploymentUpdated', message: 'deployment op changed' };
const timedOut: StrategyCheck = { ...waiting, reason: 'Timeout', unrecoverable: true };

const base: CSVObservation = {
  phase: undefined,
  reason: undefined,
  operatorGroup: { ok: true },
  requirementsMet: true,
  strategy: missing,
};

type Row = [
  string,
  Partial<CSVObservation>,
  { phase: string; reason: string; install?: boolean; delete?: boolean },
];

const table: Row[] = [
  [
    'a new CSV starts Pending with unknown requirements',
    {},
    { phase: 'Pending', reason: 'RequirementsUnknown' },
  ],
  [
    'Pending with requirements met is InstallReady',
    { phase: 'Pending' },
    { phase: 'InstallReady', reason: 'AllRequirementsMet' },
  ],
  [
    'Pending with requirements missing stays Pending',
    { phase: 'Pending', requirementsMet: false },
    { phase: 'Pending', reason: 'RequirementsNotMet' },
  ],
  [
    'InstallReady applies the strategy and goes Installing',
    { phase: 'InstallReady' },
    { phase: 'Installing', reason: 'InstallWaiting', install: true },
  ],
  [
    'Installing waits for Deployments without re-applying',
    { phase: 'Installing', strategy: waiting },
    { phase: 'Installing', reason: 'InstallWaiting', install: false },
  ],
  [
    'Installing re-applies a missing Deployment',
    { phase: 'Installing', strategy: missing },
    { phase: 'Installing', reason: 'InstallWaiting', install: true },
  ],
  [
    'Installing with healthy Deployments Succeeds',
    { phase: 'Installing', strategy: installed },
    { phase: 'Succeeded', reason: 'InstallSucceeded' },
  ],
  [
    'Installing whose rollout gave up Fails',
    { phase: 'Installing', strategy: timedOut },
    { phase: 'Failed', reason: 'InstallCheckFailed' },
  ],
  [
    'Succeeded stays Succeeded while healthy',
    { phase: 'Succeeded', strategy: installed },
    { phase: 'Succeeded', reason: 'InstallSucceeded' },
  ],
  [
    'Succeeded with a missing Deployment Fails as ComponentUnhealthy',
    { phase: 'Succeeded', strategy: missing },
    { phase: 'Failed', reason: 'ComponentUnhealthy' },
  ],
  [
    'Succeeded with an unready Deployment Fails as ComponentUnhealthy',
    { phase: 'Succeeded', strategy: waiting },
    { phase: 'Failed', reason: 'ComponentUnhealthy' },
  ],
  [
    'Succeeded whose rendered Deployment changed is reinstalled',
    { phase: 'Succeeded', strategy: updated },
    { phase: 'InstallReady', reason: 'NeedsReinstall' },
  ],
  [
    'Succeeded that lost a requirement goes back to Pending',
    { phase: 'Succeeded', strategy: installed, requirementsMet: false },
    { phase: 'Pending', reason: 'RequirementsNotMet' },
  ],
  [
    'Failed with healthy Deployments recovers to Succeeded',
    { phase: 'Failed', reason: 'ComponentUnhealthy', strategy: installed },
    { phase: 'Succeeded', reason: 'InstallSucceeded' },
  ],
  [
    'Failed with a missing Deployment goes Pending to reinstall',
    { phase: 'Failed', reason: 'ComponentUnhealthy', strategy: missing },
    { phase: 'Pending', reason: 'NeedsReinstall' },
  ],
  [
    'Failed on a rollout that gave up stays Failed (no reinstall loop)',
    { phase: 'Failed', reason: 'InstallCheckFailed', strategy: timedOut },
    { phase: 'Failed', reason: 'InstallCheckFailed', install: false },
  ],
  [
    'no OperatorGroup Fails with its reason, whatever the phase',
    {
      phase: 'Succeeded',
      strategy: installed,
      operatorGroup: { ok: false, reason: 'NoOperatorGroup', message: 'm' },
    },
    { phase: 'Failed', reason: 'NoOperatorGroup' },
  ],
  [
    'Failed on NoOperatorGroup goes Pending once the group exists',
    { phase: 'Failed', reason: 'NoOperatorGroup', strategy: missing },
    { phase: 'Pending', reason: 'NeedsReinstall' },
  ],
  [
    'a CSV being replaced is Replacing and applies nothing',
    { phase: 'Succeeded', strategy: missing, replacedBy: { name: 'op.v2', phase: 'Installing' } },
    { phase: 'Replacing', reason: 'BeingReplaced', install: false },
  ],
  [
    'a CSV whose replacement Succeeded is Deleting and deleted',
    { phase: 'Replacing', replacedBy: { name: 'op.v2', phase: 'Succeeded' } },
    { phase: 'Deleting', reason: 'Replaced', delete: true },
  ],
  [
    'a CSV in the middle of a chain stays Replacing while the one it replaces is there',
    { phase: 'Replacing', replacedBy: { name: 'op.v3', phase: 'Succeeded' }, replacesLive: true },
    { phase: 'Replacing', reason: 'BeingReplaced', install: false, delete: false },
  ],
  [
    'the oldest CSV of a chain whose newest Succeeded is deleted first',
    { phase: 'Replacing', replacedBy: { name: 'op.v2', phase: 'Succeeded' }, replacesLive: false },
    { phase: 'Deleting', reason: 'Replaced', delete: true },
  ],
  [
    'Replacing whose replacement went away returns to Succeeded when healthy',
    { phase: 'Replacing', strategy: installed },
    { phase: 'Succeeded', reason: 'InstallSucceeded' },
  ],
  [
    'a successor whose predecessor is not upgradeable waits in Pending, installing nothing',
    { phase: 'InstallReady', notUpgradeable: 'the operator is not upgradeable: migrating' },
    { phase: 'Pending', reason: 'OperatorConditionNotUpgradeable', install: false },
  ],
  [
    'a new successor is held before its requirements are even read',
    { phase: undefined, notUpgradeable: 'm' },
    { phase: 'Pending', reason: 'OperatorConditionNotUpgradeable' },
  ],
  [
    'once released, the held successor goes on',
    { phase: 'Pending', reason: 'OperatorConditionNotUpgradeable' },
    { phase: 'InstallReady', reason: 'AllRequirementsMet' },
  ],
  [
    'a successor already installing is not stopped by a later Upgradeable=False',
    { phase: 'Installing', strategy: installed, notUpgradeable: 'm' },
    { phase: 'Succeeded', reason: 'InstallSucceeded' },
  ],
];

describe('decideCSVPhase', () => {
  it.each(table)('%s', (_name, observed, expected) => {
    const d = decideCSVPhase({ ...base, ...observed });
    expect(d).toMatchObject({ phase: expected.phase, reason: expected.reason });
    if (expected.install !== undefined) expect(d.install).toBe(expected.install);
    expect(d.delete).toBe(expected.delete ?? false);
  });

  it('a settled phase decides itself again, so a steady state writes nothing', () => {
    const settled = [
      { ...base, phase: 'Succeeded', reason: 'InstallSucceeded', strategy: installed },
      { ...base, phase: 'Failed', reason: 'InstallCheckFailed', strategy: timedOut },
      { ...base, phase: 'Installing', reason: 'InstallWaiting', strategy: waiting },
      { ...base, phase: 'Pending', reason: 'RequirementsNotMet', requirementsMet: false },
      {
        ...base,
        phase: 'Failed',
        reason: 'NoOperatorGroup',
        operatorGroup: { ok: false, reason: 'NoOperatorGroup', message: 'm' },
      },
    ] as CSVObservation[];
    for (const o of settled) {
      const d = decideCSVPhase(o);
      expect([d.phase, d.reason]).toEqual([o.phase, o.reason]);
      expect(decideCSVPhase({ ...o, phase: d.phase, reason: d.reason })).toEqual(d);
    }
  });

  it('only InstallReady and Installing ever apply the strategy', () => {
    const phases = [
      '',
      'Pending',
      'InstallReady',
      'Installing',
      'Succeeded',
      'Failed',
      'Replacing',
      'Deleting',
      'Unknown',
    ];
    for (const phase of phases) {
      for (const strategy of [installed, missing, waiting, updated, timedOut]) {
        const d = decideCSVPhase({ ...base, phase: phase as CSVObservation['phase'], strategy });
        if (d.install) expect(['InstallReady', 'Installing']).toContain(phase);
      }
    }
  });

  it("messages are OLM's for the reasons users match on", () => {
    expect(decideCSVPhase({ ...base, phase: 'Pending' }).message).toBe(
      'all requirements found, attempting install',
    );
    expect(decideCSVPhase({ ...base, phase: 'Installing', strategy: installed }).message).toBe(
      'install strategy completed with no errors',
    );
    expect(decideCSVPhase({ ...base, phase: 'Succeeded', strategy: missing }).message).toBe(
      'installing: missing deployment with name=op',
    );
    expect(decideCSVPhase({ ...base, replacedBy: { name: 'op.v2', phase: 'Pending' } }).message).toBe(
      'being replaced by csv: op.v2',
    );
  });
});
