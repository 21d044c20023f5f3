import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readInstallStrategy, type StrategyProblem } from '../../../src/olm/install-strategy.js';
import { installStrategyOf } from '../../../src/install/csv.js';
import type { ClusterServiceVersion } from '../../../src/apis/operators.js';

const deployment = (over: Record<string, unknown> = {}) => ({
  name: 'op',
  spec: {
    selector: { matchLabels: { app: 'op' } },
    template: {
      metadata: { labels: { app: 'op', tier: 'x' } },
      spec: { containers: [{ name: 'manager', image: 'quay.io/op:v1' }] },
    },
  },
  ...over,
});
const csvWith = (install: unknown) => ({ spec: { install } });
const strategy = (details: unknown) => csvWith({ strategy: 'deployment', spec: details });
const summary = (ps: StrategyProblem[]) => ps.map((p) => `${p.severity} ${p.field}: ${p.message}`);

describe('readInstallStrategy', () => {
  it('reads a deployment strategy into its details', () => {
    const details = {
      deployments: [deployment()],
      permissions: [
        { serviceAccountName: 'op', rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] },
      ],
      clusterPermissions: [
        { serviceAccountName: 'op', rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] },
      ],
    };
    expect(readInstallStrategy(strategy(details))).toEqual({ strategy: details, problems: [] });
  });

  it.each<[string, unknown, string[]]>([
    [
      'no install',
      { spec: {} },
      ['refused spec.install: is required: the deployments and permissions the operator runs with'],
    ],
    [
      'a helm strategy',
      csvWith({ strategy: 'helm' }),
      ['refused spec.install.strategy: "helm" is not supported; use "deployment"'],
    ],
    [
      'details that are a list',
      strategy([]),
      ['refused spec.install.spec: must be an object with deployments, permissions and clusterPermissions'],
    ],
    [
      'deployments that are not a list',
      strategy({ deployments: {} }),
      ['refused spec.install.spec.deployments: must be a list of Deployments'],
    ],
    [
      'a Deployment without a name',
      strategy({ deployments: [deployment({ name: '' })] }),
      ['refused spec.install.spec.deployments[0].name: is required'],
    ],
    [
      'a Deployment without a selector',
      strategy({ deployments: [deployment({ spec: { ...deployment().spec, selector: undefined } })] }),
      ['refused spec.install.spec.deployments[0].spec.selector: is required'],
    ],
    [
      'template labels without the selector’s',
      strategy({
        deployments: [
          deployment({ spec: { ...deployment().spec, selector: { matchLabels: { app: 'other' } } } }),
        ],
      }),
      [
        "refused spec.install.spec.deployments[0].spec.template.metadata.labels: must include the selector's label app=other",
      ],
    ],
    [
      'no containers',
      strategy({
        deployments: [deployment({ spec: { ...deployment().spec, template: { spec: { containers: [] } } } })],
      }),
      [
        "refused spec.install.spec.deployments[0].spec.template.metadata.labels: must include the selector's label app=op",
        'refused spec.install.spec.deployments[0].spec.template.spec.containers: is required: at least one container',
      ],
    ],
    [
      'two Deployments of one name',
      strategy({ deployments: [deployment(), deployment()] }),
      ['refused spec.install.spec.deployments[1].name: deployment "op" is declared twice'],
    ],
    [
      'a permission without a ServiceAccount',
      strategy({ deployments: [deployment()], permissions: [{ rules: [] }] }),
      [
        'refused spec.install.spec.permissions[0].serviceAccountName: is required: the ServiceAccount granted the rules',
        'warning spec.install.spec.permissions[0].rules: is empty: the service account gets no permissions',
      ],
    ],
  ])('refuses %s', (_, csv, want) => {
    const read = readInstallStrategy(csv);
    expect(summary(read.problems)).toEqual(want);
    expect(read.strategy).toBeUndefined();
  });

  it.each<[string, unknown, string[]]>([
    [
      'no details',
      csvWith({ strategy: 'deployment' }),
      ['warning spec.install.spec.deployments: is empty: the CSV installs and runs no operator'],
    ],
    [
      'no Deployments',
      strategy({ deployments: [] }),
      ['warning spec.install.spec.deployments: is empty: the CSV installs and runs no operator'],
    ],
    [
      'a container without an image',
      strategy({
        deployments: [
          deployment({
            spec: {
              ...deployment().spec,
              template: { ...deployment().spec.template, spec: { containers: [{ name: 'm' }] } },
            },
          }),
        ],
      }),
      ['invalid spec.install.spec.deployments[0].spec.template.spec.containers[0].image: is required'],
    ],
    [
      'rules OLM installs but validators refuse',
      strategy({
        deployments: [deployment()],
        permissions: [
          {
            serviceAccountName: 'op',
            rules: [{ nonResourceURLs: ['/x'] }, { resources: ['pods'], verbs: ['get'] }],
          },
        ],
      }),
      [
        'invalid spec.install.spec.permissions[0].rules[0].verbs: is required: at least one verb',
        'invalid spec.install.spec.permissions[0].rules[0].nonResourceURLs: only cluster permissions can grant non-resource URLs',
        'invalid spec.install.spec.permissions[0].rules[1].apiGroups: is required with resources ("" is the core group)',
      ],
    ],
  ])('installs, with findings, %s', (_, csv, want) => {
    const read = readInstallStrategy(csv);
    expect(summary(read.problems)).toEqual(want);
    expect(read.strategy).toBeDefined();
  });

  // The one rule both readers share: install refuses exactly the `refused` problems, and has a
  // strategy to install exactly when there are none.
  it('gives install a strategy exactly when nothing is refused', () => {
    const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
    const label = fc.constantFrom('op', 'other');
    const container = fc.record({
      name: maybe(fc.constantFrom('', 'm')),
      image: maybe(fc.constantFrom('', 'i:1')),
    });
    const dep = fc.record({
      name: maybe(fc.constantFrom('', 'a', 'b')),
      spec: maybe(
        fc.record({
          selector: maybe(fc.record({ matchLabels: fc.record({ app: label }) })),
          template: maybe(
            fc.record({
              metadata: fc.record({ labels: fc.record({ app: label }) }),
              spec: fc.record({ containers: fc.array(container, { maxLength: 2 }) }),
            }),
          ),
        }),
      ),
    });
    const rule = fc.record({ verbs: maybe(fc.constant(['get'])), resources: maybe(fc.constant(['pods'])) });
    const perm = fc.record({
      serviceAccountName: maybe(fc.constantFrom('', 'sa')),
      rules: maybe(fc.array(rule, { maxLength: 2 })),
    });
    const install = fc.record({
      strategy: fc.constantFrom('deployment', 'helm'),
      spec: maybe(
        fc.record({
          deployments: maybe(fc.array(dep, { maxLength: 3 })),
          permissions: maybe(fc.array(perm, { maxLength: 2 })),
        }),
      ),
    });
    fc.assert(
      fc.property(install, (i) => {
        const csv = csvWith(i);
        const read = readInstallStrategy(csv);
        const refused = read.problems.filter((p) => p.severity === 'refused');
        expect(read.strategy === undefined).toBe(refused.length > 0);
        const installed = installStrategyOf(csv as unknown as ClusterServiceVersion, 'CSV/x');
        expect(installed.ok ? [] : installed.errors.map((e) => `${e.field}: ${e.message}`)).toEqual(
          refused.map((p) => `${p.field}: ${p.message}`),
        );
      }),
    );
  });
});
