import { describe, expect, it } from 'vitest';
import { CSVReason } from '../../../src/apis/conditions.js';
import { CSVPhase } from '../../../src/apis/operators.js';
import type { CSVDecision } from '../../../src/controllers/csv-phase.js';
import {
  servingCertificateStatus,
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
const fresh = (rotateAt: number, issuedAt = 0): CertificateVerdict => ({
  fresh: true,
  certificate,
  rotateAt,
  issuedAt,
});
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
  const apiServiceMissing = {
    check: {
      ok: false as const,
      state: 'missing' as const,
      deployment: 'gadget-api-server',
      apiService: true,
      message: 'APIService v1beta1.widgets.example.com not found',
    },
  };
  const webhookMissing = { check: { ...apiServiceMissing.check, apiService: false } };
  const withAPI = (verdicts: CertificateVerdict[]) => state(verdicts, servingCSV({ apiService: true }));
  const rotation = {
    phase: CSVPhase.Pending,
    reason: CSVReason.NeedsCertRotation,
    message: 'CSV owns resources that require a cert refresh',
    install: false,
    delete: false,
  };

  it.each([
    {
      name: 'fresh certificates and everything in place change nothing',
      current: CSVPhase.Succeeded,
      from: decision(CSVPhase.Succeeded),
      state: () => state([fresh(1)]),
      observed: ok,
      want: decision(CSVPhase.Succeeded),
    },
    {
      name: 'certificates due send an installed CSV to Pending for rotation',
      current: CSVPhase.Succeeded,
      from: decision(CSVPhase.Succeeded),
      state: () => state([due]),
      observed: ok,
      want: rotation,
    },
    {
      name: 'whatever the phase machine made of the Deployments that lost their certificate',
      current: CSVPhase.Succeeded,
      from: { ...decision(CSVPhase.InstallReady), reason: CSVReason.NeedsReinstall },
      state: () => state([due]),
      observed: webhookMissing,
      want: rotation,
    },
    {
      name: 'certificates due send a failed CSV to Pending for rotation',
      current: CSVPhase.Failed,
      from: { ...decision(CSVPhase.Pending), reason: CSVReason.NeedsReinstall },
      state: () => state([due]),
      observed: ok,
      want: rotation,
    },
    {
      name: 'an install under way issues them itself',
      current: CSVPhase.Installing,
      from: decision(CSVPhase.Installing, true),
      state: () => state([due]),
      observed: ok,
      want: decision(CSVPhase.Installing, true),
    },
    {
      name: "an installed CSV missing an API service's resources fails with APIServiceResourceIssue",
      current: CSVPhase.Succeeded,
      from: { ...decision(CSVPhase.Failed), reason: CSVReason.ComponentUnhealthy },
      state: () => withAPI([fresh(1), fresh(1)]),
      observed: apiServiceMissing,
      want: {
        phase: CSVPhase.Failed,
        reason: CSVReason.APIServiceResourceIssue,
        message: apiServiceMissing.check.message,
        install: false,
        delete: false,
      },
    },
    {
      name: '... before its certificates are looked at',
      current: CSVPhase.Succeeded,
      from: decision(CSVPhase.Succeeded),
      state: () => withAPI([due, due]),
      observed: apiServiceMissing,
      want: expect.objectContaining({ phase: CSVPhase.Failed, reason: CSVReason.APIServiceResourceIssue }),
    },
    {
      name: '... and then reinstalls with APIServiceResourcesNeedReinstall',
      current: CSVPhase.Failed,
      from: { ...decision(CSVPhase.Pending), reason: CSVReason.NeedsReinstall },
      state: () => withAPI([fresh(1), fresh(1)]),
      observed: apiServiceMissing,
      want: {
        phase: CSVPhase.Pending,
        reason: CSVReason.APIServiceResourcesNeedReinstall,
        message: apiServiceMissing.check.message,
        install: false,
        delete: false,
      },
    },
    {
      name: 'a missing webhook configuration keeps the general reasons',
      current: CSVPhase.Succeeded,
      from: { ...decision(CSVPhase.Failed), reason: CSVReason.ComponentUnhealthy },
      state: () => state([fresh(1)]),
      observed: webhookMissing,
      want: { ...decision(CSVPhase.Failed), reason: CSVReason.ComponentUnhealthy },
    },
    {
      name: 'an install under way applies what is missing',
      current: CSVPhase.Installing,
      from: decision(CSVPhase.Installing, true),
      state: () => withAPI([fresh(1), fresh(1)]),
      observed: apiServiceMissing,
      want: decision(CSVPhase.Installing, true),
    },
  ])('$name', ({ current, from, state: s, observed, want }) => {
    expect(servingDecision(from, s(), observed, current)).toEqual(want);
  });

  it('fails the CSV with the reason of its first invalid description, naming every problem', () => {
    const csv = servingCSV({ webhooks: [validating, validating] });
    const d = servingDecision(decision(CSVPhase.InstallReady), state([], csv), undefined, CSVPhase.Pending);
    expect(d).toEqual({
      phase: CSVPhase.Failed,
      reason: CSVReason.InvalidWebhookDescription,
      message: `ClusterServiceVersion/gadget-operator.v1.2.0: spec.webhookdefinitions[1].generateName: CSV contains repeated WebhookDescription name vgadget.kb.io`,
      install: false,
      delete: false,
    });
  });

  it('fails the CSV with OwnerConflict when an APIService belongs to another operator', () => {
    const d = servingDecision(
      decision(CSVPhase.Installing, true),
      state([fresh(1)]),
      { ...ok, conflict: 'pre-existing APIService v1.x is not adoptable' },
      CSVPhase.Installing,
    );
    expect(d).toEqual({
      phase: CSVPhase.Failed,
      reason: CSVReason.OwnerConflict,
      message: 'pre-existing APIService v1.x is not adoptable',
      install: false,
      delete: false,
    });
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

describe('servingCertificateStatus', () => {
  const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
  const t0 = Date.UTC(2026, 10, 23, 12, 0, 0);
  it.each([
    { name: 'nothing served', verdicts: [], want: undefined },
    {
      name: 'a certificate due: nothing to say until it is replaced',
      verdicts: [fresh(t0), due],
      want: undefined,
    },
    {
      name: 'the latest issue and the first rotation of the stored certificates',
      verdicts: [fresh(t0 + 5 * hour, t0), fresh(t0 + 2 * hour, t0 + minute)],
      want: { certsLastUpdated: at(t0 + minute), certsRotateAt: at(t0 + 2 * hour) },
    },
  ])('$name', ({ verdicts, want }) => {
    const csv = servingCSV({ apiService: true });
    expect(servingCertificateStatus(state(verdicts, csv))).toEqual(want);
  });
});
