import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { InstallContext } from '../../../src/web/client/api.js';
import {
  defaultNamespace,
  type Installable,
  installPlan,
  modeOf,
  namespaceProblem,
  toYaml,
} from '../../../src/web/client/snippet.js';

const All = ['OwnNamespace', 'SingleNamespace', 'AllNamespaces'];

function pkg(
  installModes = All,
  install: Partial<InstallContext> = {},
  extra: Partial<Installable> = {},
): Installable {
  return {
    name: 'etcd',
    defaultChannel: 'stable',
    installModes,
    install: { source: { name: 'community', namespace: 'olm' }, ...install },
    ...extra,
  };
}

const cluster = (
  operatorGroups: { namespace: string; name: string; targetNamespaces: string[] }[],
  namespaces: string[],
) => ({
  cluster: { operatorGroups, namespaces },
});

const choice = (namespace: string, approval: 'Automatic' | 'Manual' = 'Automatic') => ({
  namespace,
  channel: 'stable',
  approval,
});

const kinds = (objects: Record<string, unknown>[]) => objects.map((o) => o.kind);

describe('defaultNamespace', () => {
  it.each([
    [
      'an AllNamespaces operator: the global operators namespace',
      pkg(All, { globalOperatorsNamespace: 'operators' }),
      'operators',
    ],
    ['no global namespace known: one of its own', pkg(All), 'my-etcd'],
    [
      'an OwnNamespace-only operator: one of its own',
      pkg(['OwnNamespace'], { globalOperatorsNamespace: 'operators' }),
      'my-etcd',
    ],
    [
      'the namespace the operator suggests',
      pkg(All, { globalOperatorsNamespace: 'operators' }, { suggestedNamespace: 'etcd-system' }),
      'etcd-system',
    ],
    [
      'a catalog outside the global namespace: the catalog`s namespace, the only one that sees it',
      pkg(
        All,
        { globalOperatorsNamespace: 'operators', onlyNamespace: 'team-a' },
        { suggestedNamespace: 'x' },
      ),
      'team-a',
    ],
  ])('%s', (_, p, expected) => {
    expect(defaultNamespace(p)).toBe(expected);
  });
});

describe('installPlan against a cluster', () => {
  it('into the global operators namespace: only the Subscription', () => {
    const p = pkg(All, {
      globalOperatorsNamespace: 'operators',
      ...cluster(
        [{ namespace: 'operators', name: 'global-operators', targetNamespaces: [] }],
        ['operators', 'olm'],
      ),
    });
    const plan = installPlan(p, choice('operators'));
    expect(plan.problem).toBeUndefined();
    expect(plan.objects).toEqual([
      {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'Subscription',
        metadata: { name: 'etcd', namespace: 'operators' },
        spec: {
          channel: 'stable',
          name: 'etcd',
          source: 'community',
          sourceNamespace: 'olm',
          installPlanApproval: 'Automatic',
        },
      },
    ]);
    expect(plan.notes.join(' ')).toContain('global-operators');
  });

  it('into an existing namespace without an OperatorGroup: one for that namespace', () => {
    const plan = installPlan(pkg(All, cluster([], ['team-a'])), choice('team-a'));
    expect(kinds(plan.objects)).toEqual(['OperatorGroup', 'Subscription']);
    expect(plan.objects[0]).toEqual({
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: 'team-a', namespace: 'team-a' },
      spec: { targetNamespaces: ['team-a'] },
    });
  });

  it('into a new namespace: the Namespace too', () => {
    const plan = installPlan(pkg(All, cluster([], ['default'])), choice('my-etcd'));
    expect(kinds(plan.objects)).toEqual(['Namespace', 'OperatorGroup', 'Subscription']);
  });

  it('an operator that only watches every namespace gets an OperatorGroup for every namespace', () => {
    const plan = installPlan(pkg(['AllNamespaces'], cluster([], ['x'])), choice('x'));
    expect(plan.objects[0]).toMatchObject({ kind: 'OperatorGroup', spec: {} });
  });

  it.each([
    [
      'two OperatorGroups in the namespace',
      pkg(
        All,
        cluster(
          [
            { namespace: 'x', name: 'a', targetNamespaces: ['x'] },
            { namespace: 'x', name: 'b', targetNamespaces: [] },
          ],
          ['x'],
        ),
      ),
      'x',
      'namespace x has 2 OperatorGroups (a, b)',
    ],
    [
      'an OperatorGroup whose mode the operator lacks',
      pkg(
        ['OwnNamespace'],
        cluster([{ namespace: 'operators', name: 'global-operators', targetNamespaces: [] }], ['operators']),
      ),
      'operators',
      'gives the AllNamespaces install mode, which etcd does not support',
    ],
    [
      'an operator that watches only other namespaces',
      pkg(['SingleNamespace'], cluster([], ['x'])),
      'x',
      'supports only SingleNamespace',
    ],
    [
      'a namespace that does not see the catalog',
      pkg(All, { onlyNamespace: 'team-a', ...cluster([], ['team-b']) }),
      'team-b',
      'only Subscriptions in team-a can use it',
    ],
  ])('says why it would fail: %s', (_, p, ns, problem) => {
    expect(installPlan(p, choice(ns)).problem).toContain(problem);
  });

  it('keeps an existing OperatorGroup whose mode fits, and says which', () => {
    const p = pkg(All, cluster([{ namespace: 'x', name: 'og', targetNamespaces: ['x'] }], ['x']));
    const plan = installPlan(p, choice('x'));
    expect(kinds(plan.objects)).toEqual(['Subscription']);
    expect(plan.notes).toContain('Namespace x has the OperatorGroup og (OwnNamespace).');
  });

  it('writes Manual approval and says how to approve', () => {
    const plan = installPlan(pkg(All, cluster([], ['x'])), choice('x', 'Manual'));
    expect(plan.objects.at(-1)).toMatchObject({ spec: { installPlanApproval: 'Manual' } });
    expect(plan.notes.join(' ')).toContain('"approved":true');
  });
});

describe('installPlan from a catalog directory', () => {
  const dir = pkg(All, {
    source: { name: 'bosun-samples', namespace: 'olm' },
    catalogSource: { address: 'http://127.0.0.1:8080/', displayName: 'bosun-samples' },
    globalOperatorsNamespace: 'operators',
  });

  it('starts with the CatalogSource that reads the served directory', () => {
    const plan = installPlan(dir, choice('operators'));
    expect(kinds(plan.objects)).toEqual(['CatalogSource', 'Subscription']);
    expect(plan.objects[0]).toEqual({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: 'bosun-samples', namespace: 'olm' },
      spec: { sourceType: 'http', address: 'http://127.0.0.1:8080/', displayName: 'bosun-samples' },
    });
  });

  it('adds the Namespace and an OperatorGroup for any namespace but the global one, as it cannot look', () => {
    expect(kinds(installPlan(dir, choice('my-etcd')).objects)).toEqual([
      'CatalogSource',
      'Namespace',
      'OperatorGroup',
      'Subscription',
    ]);
  });
});

describe('modeOf and namespaceProblem', () => {
  it.each([
    [[], 'AllNamespaces'],
    [['x'], 'OwnNamespace'],
    [['y'], 'SingleNamespace'],
    [['x', 'y'], 'MultiNamespace'],
  ])('targets %j from x: %s', (targets, mode) => {
    expect(modeOf({ namespace: 'x', name: 'og', targetNamespaces: targets }, 'x')).toBe(mode);
  });

  it.each([
    ['operators', undefined],
    ['my-etcd-2', undefined],
    ['', 'enter a namespace'],
    ['My-NS', 'lower-case'],
    ['-x', 'starting and ending'],
    ['a'.repeat(64), 'at most 63'],
  ])('%j: %s', (ns, problem) => {
    const got = namespaceProblem(ns);
    if (problem === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(problem);
  });
});

describe('toYaml', () => {
  it('writes a stream kubectl reads back as the same objects', () => {
    const p = pkg(All, {
      source: { name: 'bosun-samples', namespace: 'olm' },
      catalogSource: { address: 'http://127.0.0.1:8080/', displayName: 'Bosun samples: "all"' },
    });
    const { objects } = installPlan(p, choice('my-etcd', 'Manual'));
    const text = toYaml(objects);
    expect(text).toContain('\n---\n');
    expect(text).toContain('  targetNamespaces:\n  - my-etcd\n');
    expect(parseAllDocuments(text).map((d) => d.toJS())).toEqual(objects);
  });

  it('quotes whatever YAML would read as something else (property)', () => {
    const scalar = fc.oneof(
      fc.string(),
      fc.constantFrom(
        'true',
        'no',
        'null',
        '~',
        '1.0',
        '0x1F',
        '- x',
        'a: b',
        '#c',
        "'q'",
        '"q"',
        '*a',
        '&a',
        '!t',
        '@',
        '`',
        ' lead',
        'trail ',
      ),
      fc.integer(),
      fc.boolean(),
    );
    const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        scalar,
        fc.array(tie('v'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('a', 'b', 'c-d', 'e.f'), tie('v'), { maxKeys: 3 }),
      ),
    })).v;
    fc.assert(
      fc.property(
        fc.array(
          fc.dictionary(fc.constantFrom('kind', 'metadata', 'spec'), value, { minKeys: 1, maxKeys: 3 }),
          { minLength: 1, maxLength: 3 },
        ),
        (objects) => {
          const back = parseAllDocuments(toYaml(objects)).map((d) => d.toJS());
          expect(back).toEqual(objects);
        },
      ),
    );
  });
});
