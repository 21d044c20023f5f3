import { describe, expect, it } from 'vitest';
import { CSVReason } from '../../../src/apis/conditions.js';
import { CSVPhase } from '../../../src/apis/operators.js';
import type { CSVDecision } from '../../../src/controllers/csv-phase.js';
import {
  servingDecision,
  servingRequeueAfter,
  type ServingState,
} from '../../../src/controllers/csv-serving.js';
import type { CertificateVerdict } from '../../../src/install/certificates.js';
import { servingDeployments } from '../../../src/install/serving.js';
import { servingCSV, validating } from '../install/webhooks-support.js';

const minute = 60_000;
const hour = 60 * minute;
const certificate = { caPEM: 'ca', certPEM: 'cert', keyPEM: 'key' };
const fresh = (rotateAt: number): CertificateVerdict => ({ fresh: true, certificate, rotateAt });
const due: CertificateVerdict = { fresh: false, reason: 'secret x not found' };

function state(verdicts: CertificateVerdict[], csv = servingCSV()): ServingState {
  const plan = servingDeployments(csv);
  const serving = plan.ok ? plan.value : [];
  return {
    plan,
    serving,
    secrets: new Map(),
    verdicts: new Map(verdicts.map((v, i) => [serving[i]?.deployment ?? `d${i}`, v])),
  };
}

const decision = (phase: CSVPhase, install = false): CSVDecision => ({
  phase,
  reason: phase === CSVPhase.Succeeded ? CSVReason.InstallSucceeded : CSVReason.InstallWaiting,
  message: 'from the phase machine',
  install,
  delete: false,
});
const ok = { check: { ok: true as const, unavailableAPIServices: [] } };

describe('servingDecision', () => {
  it.each([
    {
      name: 'fresh certificates change nothing',
      phase: CSVPhase.Succeeded,
      verdicts: [fresh(1)],
      want: decision(CSVPhase.Succeeded),
    },
    {
      name: 'certificates due send an installed CSV to Pending for rotation',
      phase: CSVPhase.Succeeded,
      verdicts: [due],
      want: {
        phase: CSVPhase.Pending,
        reason: CSVReason.NeedsCertRotation,
        message: 'CSV owns resources that require a cert refresh',
        install: false,
        delete: false,
      },
    },
    {
      name: 'certificates due send a failed CSV to Pending for rotation',
      phase: CSVPhase.Failed,
      verdicts: [due],
      want: expect.objectContaining({ phase: CSVPhase.Pending, reason: CSVReason.NeedsCertRotation }),
    },
    {
      name: 'an install under way issues them itself',
      phase: CSVPhase.Installing,
      verdicts: [due],
      want: decision(CSVPhase.Installing, true),
    },
  ])('$name', ({ phase, verdicts, want }) => {
    expect(servingDecision(decision(phase, phase === CSVPhase.Installing), state(verdicts), ok)).toEqual(
      want,
    );
  });

  it('fails the CSV with the reason of its first invalid description, naming every problem', () => {
    const csv = servingCSV({ webhooks: [validating, validating] });
    const d = servingDecision(decision(CSVPhase.InstallReady), state([], csv), undefined);
    expect(d).toEqual({
      phase: CSVPhase.Failed,
      reason: CSVReason.InvalidWebhookDescription,
      message: `ClusterServiceVersion/gadget-operator.v1.2.0: spec.webhookdefinitions[1].generateName: CSV contains repeated WebhookDescription name vgadget.kb.io`,
      install: false,
      delete: false,
    });
  });

  const apiServiceMissing = {
    check: {
      ok: false as const,
      state: 'missing' as const,
      deployment: 'gadget-api-server',
      apiService: true,
      message: 'APIService v1beta1.widgets.example.com not found',
    },
  };

  it.each([
    {
      name: 'an installed CSV fails with APIServiceResourceIssue',
      from: { ...decision(CSVPhase.Failed), reason: CSVReason.ComponentUnhealthy },
      want: { phase: CSVPhase.Failed, reason: CSVReason.APIServiceResourceIssue },
    },
    {
      name: 'a failed CSV reinstalls with APIServiceResourcesNeedReinstall',
      from: { ...decision(CSVPhase.Pending), reason: CSVReason.NeedsReinstall },
      want: { phase: CSVPhase.Pending, reason: CSVReason.APIServiceResourcesNeedReinstall },
    },
    {
      name: 'an install under way keeps waiting',
      from: decision(CSVPhase.Installing, true),
      want: { phase: CSVPhase.Installing, reason: CSVReason.InstallWaiting, install: true },
    },
  ])("OLM's reasons for an owned API service's missing resources: $name", ({ from, want }) => {
    const d = servingDecision(
      from,
      state([fresh(1), fresh(1)], servingCSV({ apiService: true })),
      apiServiceMissing,
    );
    expect(d).toMatchObject(want);
    if (want.reason !== CSVReason.InstallWaiting) expect(d.message).toBe(apiServiceMissing.check.message);
  });

  it('keeps the general reasons for a missing webhook configuration', () => {
    const from = { ...decision(CSVPhase.Failed), reason: CSVReason.ComponentUnhealthy };
    const webhookMissing = { check: { ...apiServiceMissing.check, apiService: false } };
    expect(servingDecision(from, state([fresh(1)]), webhookMissing)).toEqual(from);
  });

  it('fails the CSV with OwnerConflict when an APIService belongs to another operator', () => {
    const d = servingDecision(decision(CSVPhase.Installing, true), state([fresh(1)]), {
      ...ok,
      conflict: 'pre-existing APIService v1.x is not adoptable',
    });
    expect(d).toMatchObject({ phase: CSVPhase.Failed, reason: CSVReason.OwnerConflict, install: false });
  });
});

describe('servingRequeueAfter', () => {
  const now = 1_000_000_000;
  it.each([
    { name: 'nothing served', verdicts: [], want: undefined },
    { name: 'only certificates due (an install follows)', verdicts: [due], want: undefined },
    { name: 'rotation in a minute', verdicts: [fresh(now + minute)], want: minute },
    {
      name: 'the first rotation of two',
      verdicts: [fresh(now + 5 * minute), fresh(now + 2 * minute)],
      want: 2 * minute,
    },
    {
      name: 'rotation in a year: looked at every ten minutes all the same',
      verdicts: [fresh(now + 365 * 24 * hour)],
      want: 10 * minute,
    },
    { name: 'rotation overdue: soon', verdicts: [fresh(now - hour)], want: 1_000 },
  ])('$name', ({ verdicts, want }) => {
    const csv = servingCSV({ apiService: true });
    expect(servingRequeueAfter(state(verdicts, csv), now)).toBe(want);
  });
});
