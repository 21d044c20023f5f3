import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Bundle, KubeManifest } from '../../../src/apis/bundle.js';
import { readBundle } from '../../../src/bundle/read.js';
import { validateBundle } from '../../../src/bundle/validate.js';
import { installStrategyOf } from '../../../src/install/csv.js';
import type { ClusterServiceVersion } from '../../../src/apis/operators.js';
import { webhookDescriptionProblems } from '../../../src/olm/webhooks.js';
import type { Problem } from '../../../src/util/result.js';

const fixtures = join(import.meta.dirname, '../../fixtures');

async function minimal(): Promise<Bundle> {
  const r = await readBundle(join(fixtures, 'bundles/minimal'));
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}
// Tests reach into parsed YAML freely; typing every path would hide what each case changes.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed YAML under test
type Loose = Record<string, any>;
const csvOf = (b: Bundle) =>
  b.manifests.find((m) => m.object.kind === 'ClusterServiceVersion')!.object as KubeManifest & {
    spec: Loose;
    metadata: Loose;
  };
const csvFile = join(fixtures, 'bundles/minimal/manifests/gizmo.csv.yaml');
const annotationsFile = join(fixtures, 'bundles/minimal/metadata/annotations.yaml');

describe('validateBundle', () => {
  it('passes the minimal bundle with no problems', async () => {
    expect(validateBundle(await minimal())).toEqual({ errors: [], warnings: [] });
  });

  it('passes the sample operators', async () => {
    for (const v of ['0.1.0', '0.1.1', '0.2.0', '0.2.1']) {
      const r = await readBundle(join(import.meta.dirname, '../../../bundles/bosun-sample', v));
      if (!r.ok) throw new Error(JSON.stringify(r.errors));
      expect(validateBundle(r.value)).toEqual({ errors: [], warnings: [] });
    }
  });

  it.each<[string, (b: Bundle) => void, Partial<Problem>]>([
    [
      'a missing version',
      (b) => delete csvOf(b).spec.version,
      { file: csvFile, object: 'ClusterServiceVersion/gizmo.v1.0.0', field: 'spec.version' },
    ],
    [
      'a version that is a YAML number',
      (b) => (csvOf(b).spec.version = 1.5),
      { field: 'spec.version', message: 'must be a string; quote it in YAML ("1.5")' },
    ],
    ['a non-semver version', (b) => (csvOf(b).spec.version = 'v1.0'), { field: 'spec.version' }],
    ['a wrong CSV apiVersion', (b) => (csvOf(b).apiVersion = 'v1alpha1'), { field: 'apiVersion' }],
    [
      'a CSV that replaces itself',
      (b) => (csvOf(b).spec.replaces = 'gizmo.v1.0.0'),
      { field: 'spec.replaces' },
    ],
    [
      'a bad skipRange',
      (b) => (csvOf(b).metadata.annotations = { 'olm.skipRange': 'soon' }),
      { field: 'metadata.annotations.olm.skipRange' },
    ],
    ['no install modes', (b) => delete csvOf(b).spec.installModes, { field: 'spec.installModes' }],
    [
      'an unknown install mode',
      (b) => csvOf(b).spec.installModes.push({ type: 'Everywhere', supported: true }),
      { field: 'spec.installModes[2].type' },
    ],
    [
      'no supported install mode',
      (b) => {
        for (const m of csvOf(b).spec.installModes) m.supported = false;
      },
      {
        field: 'spec.installModes',
        message: 'no install mode is supported, so the operator cannot be installed',
      },
    ],
    [
      'a deployment without containers',
      (b) => (csvOf(b).spec.install.spec.deployments[0].spec.template.spec.containers = []),
      { field: 'spec.install.spec.deployments[0].spec.template.spec.containers' },
    ],
    [
      'a container without image',
      (b) => delete csvOf(b).spec.install.spec.deployments[0].spec.template.spec.containers[0].image,
      { field: 'spec.install.spec.deployments[0].spec.template.spec.containers[0].image' },
    ],
    [
      'a container image that is not a valid reference',
      (b) =>
        (csvOf(b).spec.install.spec.deployments[0].spec.template.spec.containers[0].image = 'quay.io/op:v1 '),
      {
        field: 'spec.install.spec.deployments[0].spec.template.spec.containers[0].image',
        message: '"quay.io/op:v1 " is not a valid image reference: invalid reference format',
      },
    ],
    [
      'a related image that is not a valid reference',
      (b) => (csvOf(b).spec.relatedImages = [{ name: 'op', image: `quay.io/op@sha256:${'a'.repeat(63)}` }]),
      {
        field: 'spec.relatedImages[0].image',
        message: expect.stringContaining('invalid checksum digest length'),
      },
    ],
    [
      'a selector the pods do not match',
      (b) => (csvOf(b).spec.install.spec.deployments[0].spec.template.metadata.labels = { app: 'other' }),
      { field: 'spec.install.spec.deployments[0].spec.template.metadata.labels' },
    ],
    [
      'an install strategy other than deployment',
      (b) => (csvOf(b).spec.install.strategy = 'helm'),
      { field: 'spec.install.strategy' },
    ],
    [
      'a rule without verbs',
      (b) =>
        (csvOf(b).spec.install.spec.permissions = [
          { serviceAccountName: 'gizmo', rules: [{ apiGroups: [''], resources: ['pods'] }] },
        ]),
      { field: 'spec.install.spec.permissions[0].rules[0].verbs' },
    ],
    [
      'non-resource URLs in namespaced permissions',
      (b) =>
        (csvOf(b).spec.install.spec.permissions = [
          { serviceAccountName: 'gizmo', rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] },
        ]),
      { field: 'spec.install.spec.permissions[0].rules[0].nonResourceURLs' },
    ],
    [
      'an owned CRD missing from the bundle',
      (b) =>
        csvOf(b).spec.customresourcedefinitions.owned.push({
          name: 'widgets.fixtures.bosun.dev',
          version: 'v1',
          kind: 'Widget',
        }),
      {
        field: 'spec.customresourcedefinitions.owned[1].name',
        message:
          'the CSV owns CRD widgets.fixtures.bosun.dev but the bundle does not contain it; add its manifest',
      },
    ],
    [
      'an owned CRD version the CRD lacks',
      (b) => (csvOf(b).spec.customresourcedefinitions.owned[0].version = 'v2'),
      { field: 'spec.customresourcedefinitions.owned[0].version' },
    ],
    [
      'a CRD the CSV does not own',
      (b) => (csvOf(b).spec.customresourcedefinitions.owned = []),
      {
        field: 'spec.customresourcedefinitions.owned',
        message: 'CRD gizmos.fixtures.bosun.dev is in the bundle but the CSV does not list it as owned',
      },
    ],
    [
      'a required CRD without a group',
      (b) =>
        (csvOf(b).spec.customresourcedefinitions.required = [
          { name: 'widgets', version: 'v1', kind: 'Widget' },
        ]),
      { field: 'spec.customresourcedefinitions.required[0].name' },
    ],
    [
      'a webhook of an unknown deployment',
      (b) =>
        (csvOf(b).spec.webhookdefinitions = [
          {
            type: 'ValidatingAdmissionWebhook',
            generateName: 'vgizmo.fixtures.bosun.dev',
            deploymentName: 'nope',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            rules: [{}],
          },
        ]),
      { field: 'spec.webhookdefinitions[0].deploymentName' },
    ],
    [
      'a webhook with side effects',
      (b) =>
        (csvOf(b).spec.webhookdefinitions = [
          {
            type: 'MutatingAdmissionWebhook',
            generateName: 'mgizmo.fixtures.bosun.dev',
            deploymentName: 'gizmo-operator',
            admissionReviewVersions: ['v1'],
            sideEffects: 'Some',
            rules: [{}],
          },
        ]),
      { field: 'spec.webhookdefinitions[0].sideEffects' },
    ],
    [
      'a conversion webhook with OwnNamespace',
      (b) =>
        (csvOf(b).spec.webhookdefinitions = [
          {
            type: 'ConversionWebhook',
            generateName: 'cgizmo.fixtures.bosun.dev',
            deploymentName: 'gizmo-operator',
            admissionReviewVersions: ['v1'],
            conversionCRDs: ['gizmos.fixtures.bosun.dev'],
          },
        ]),
      {
        field: 'spec.webhookdefinitions[0].type',
        message:
          'unable to manage conversion webhook: CSVs with conversion webhooks must support only AllNamespaces',
      },
    ],
    [
      // OLM's install fails such a CSV (InvalidWebhookDescription), so validation says so first.
      "a webhook rule on OLM's own group",
      (b) =>
        (csvOf(b).spec.webhookdefinitions = [
          {
            type: 'ValidatingAdmissionWebhook',
            generateName: 'vgizmo.fixtures.bosun.dev',
            deploymentName: 'gizmo-operator',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            rules: [{ apiGroups: ['operators.coreos.com'], resources: ['subscriptions'] }],
          },
        ]),
      {
        field: 'spec.webhookdefinitions[0].rules[0]',
        message: 'webhook rules cannot include the OLM group',
      },
    ],
    [
      'a deployment without a selector',
      (b) => delete csvOf(b).spec.install.spec.deployments[0].spec.selector,
      { field: 'spec.install.spec.deployments[0].spec.selector', message: 'is required' },
    ],
    [
      'a webhook port out of range',
      (b) =>
        (csvOf(b).spec.webhookdefinitions = [
          {
            type: 'ValidatingAdmissionWebhook',
            generateName: 'vgizmo.fixtures.bosun.dev',
            deploymentName: 'gizmo-operator',
            containerPort: 70000,
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            rules: [{}],
          },
        ]),
      { field: 'spec.webhookdefinitions[0].containerPort' },
    ],
    [
      'an unsupported kind',
      (b) =>
        b.manifests.push({
          file: 'manifests/pod.yaml',
          doc: 0,
          size: 10,
          object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } },
        }),
      { object: 'Pod/p', field: 'kind' },
    ],
    [
      'an object over 1 MiB',
      (b) => (b.manifests[1]!.size = 2 * 1024 * 1024),
      {
        object: 'CustomResourceDefinition/gizmos.fixtures.bosun.dev',
        message: expect.stringContaining('over the limit of 1048576 bytes'),
      },
    ],
    [
      'a CRD whose name is not plural.group',
      (b) => (b.manifests[1]!.object.metadata = { name: 'gizmo' }),
      { field: 'metadata.name' },
    ],
    [
      'a package name that is not DNS-1123',
      (b) => (b.annotations['operators.operatorframework.io.bundle.package.v1'] = 'Gizmo'),
      { file: annotationsFile, field: 'annotations.operators.operatorframework.io.bundle.package.v1' },
    ],
    [
      'a default channel not among the channels',
      (b) => (b.annotations['operators.operatorframework.io.bundle.channel.default.v1'] = 'fast'),
      { field: 'annotations.operators.operatorframework.io.bundle.channel.default.v1' },
    ],
    [
      'another media type',
      (b) => (b.annotations['operators.operatorframework.io.bundle.mediatype.v1'] = 'plain+v0'),
      { field: 'annotations.operators.operatorframework.io.bundle.mediatype.v1' },
    ],
    [
      'an unknown dependency type',
      (b) => b.dependencies.push({ type: 'olm.magic', value: {} }),
      { field: 'dependencies[0].type' },
    ],
    [
      'a package dependency with a bad range',
      (b) => b.dependencies.push({ type: 'olm.package', value: { packageName: 'x', version: '^1' } }),
      { field: 'dependencies[0].value.version' },
    ],
    [
      'a constraint with nothing in it',
      (b) => b.dependencies.push({ type: 'olm.constraint', value: { failureMessage: 'x' } }),
      { field: 'dependencies[0].value' },
    ],
  ])('reports %s', async (_, mutate, want) => {
    const b = await minimal();
    mutate(b);
    expect(validateBundle(b).errors).toContainEqual(expect.objectContaining(want));
  });

  // OLM installs a CSV without Deployments (it succeeds with nothing running) and its validators
  // accept it, so it is worth a warning only.
  it.each<[string, (b: Bundle) => void]>([
    ['an empty deployments list', (b) => (csvOf(b).spec.install.spec.deployments = [])],
    ['no deployments list', (b) => delete csvOf(b).spec.install.spec.deployments],
    ['no strategy details', (b) => delete csvOf(b).spec.install.spec],
  ])('warns of %s without an error', async (_, mutate) => {
    const b = await minimal();
    mutate(b);
    const { errors, warnings } = validateBundle(b);
    expect(errors).toEqual([]);
    expect(warnings).toEqual([
      expect.objectContaining({
        field: 'spec.install.spec.deployments',
        message: 'is empty: the CSV installs and runs no operator',
      }),
    ]);
  });

  // The CSV's shape is its schema's to report, once; the OLM rules on the same fields keep quiet.
  it.each<[string, (b: Bundle) => void, Problem[]]>([
    [
      'an owned CRD kind that is not a string',
      (b) => (csvOf(b).spec.customresourcedefinitions.owned[0].kind = ['Gizmo']),
      [
        {
          file: csvFile,
          object: 'ClusterServiceVersion/gizmo.v1.0.0',
          field: 'spec.customresourcedefinitions.owned[0].kind',
          message: 'must be a string',
        },
      ],
    ],
    [
      'an install mode type that is not a string',
      (b) => (csvOf(b).spec.installModes[0].type = 1),
      [
        {
          file: csvFile,
          object: 'ClusterServiceVersion/gizmo.v1.0.0',
          field: 'spec.installModes[0].type',
          message: 'must be a string; quote it in YAML ("1")',
        },
      ],
    ],
    [
      'a required API without version, and with a name of the wrong type',
      (b) => (csvOf(b).spec.customresourcedefinitions.required = [{ name: 3, kind: 'Widget' }]),
      [
        {
          file: csvFile,
          object: 'ClusterServiceVersion/gizmo.v1.0.0',
          field: 'spec.customresourcedefinitions.required[0].name',
          message: 'must be a string; quote it in YAML ("3")',
        },
        {
          file: csvFile,
          object: 'ClusterServiceVersion/gizmo.v1.0.0',
          field: 'spec.customresourcedefinitions.required[0].version',
          message: 'is required',
        },
      ],
    ],
  ])('reports %s once', async (_, mutate, want) => {
    const b = await minimal();
    mutate(b);
    expect(validateBundle(b).errors).toEqual(want);
  });

  it('reads a missing supported as false, as OLM does', async () => {
    const b = await minimal();
    for (const m of csvOf(b).spec.installModes) delete m.supported;
    expect(validateBundle(b).errors).toEqual([
      expect.objectContaining({
        field: 'spec.installModes',
        message: 'no install mode is supported, so the operator cannot be installed',
      }),
    ]);
  });

  it('collects every problem in one pass and keeps warnings apart', async () => {
    const b = await minimal();
    const csv = csvOf(b);
    delete csv.spec.version;
    delete csv.spec.installModes;
    delete csv.spec.icon;
    csv.metadata.annotations = { 'alm-examples': '{not json' };
    const { errors, warnings } = validateBundle(b);
    expect(errors.map((e) => e.field)).toEqual(['spec.version', 'spec.installModes']);
    expect(warnings.map((w) => w.field)).toEqual(['metadata.annotations.alm-examples', 'spec.icon']);
  });

  it.each([
    ['csv-without-version', 'spec.version', 'is required: the semver version of this bundle'],
    ['non-semver-version', 'spec.version', '"v1.0" is not a semver version (like 1.2.3 or 1.2.3-rc.1)'],
    [
      'two-csvs',
      undefined,
      expect.stringContaining(
        'the bundle has 2 ClusterServiceVersions, it needs exactly one: manifests/gizmo-copy.csv.yaml',
      ),
    ],
    [
      'crd-misindented-property',
      'spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.colour',
      '"colour" is not a JSON-schema keyword; if it is meant as a property, indent it under "properties"',
    ],
  ])('the bad fixture %s is refused', async (name, field, message) => {
    const r = await readBundle(join(fixtures, 'bad', name));
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(validateBundle(r.value).errors).toEqual([
      expect.objectContaining({ ...(field ? { field } : {}), message }),
    ]);
  });

  // What install refuses, validation reports as an error with the same field and message: both
  // read the strategy and webhook descriptions through the kernel.
  it('reports every problem install refuses a bundle over', async () => {
    const b = await minimal();
    const original = structuredClone(csvOf(b).spec);
    const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
    const container = fc.record({
      name: maybe(fc.constantFrom('', 'm')),
      image: maybe(fc.constantFrom('', 'i:1')),
    });
    const deployment = fc.record({
      name: maybe(fc.constantFrom('', 'gizmo-operator', 'other')),
      spec: fc.record({
        selector: maybe(fc.record({ matchLabels: fc.record({ app: fc.constantFrom('a', 'b') }) })),
        template: maybe(
          fc.record({
            metadata: fc.record({ labels: fc.record({ app: fc.constantFrom('a', 'b') }) }),
            spec: fc.record({ containers: fc.array(container, { maxLength: 2 }) }),
          }),
        ),
      }),
    });
    const webhook = fc.record({
      type: fc.constantFrom('ValidatingAdmissionWebhook', 'ConversionWebhook'),
      generateName: fc.constantFrom('v.gizmo.dev', 'w.gizmo.dev'),
      deploymentName: fc.constantFrom('gizmo-operator', 'other', 'nope'),
      admissionReviewVersions: fc.constant(['v1']),
      sideEffects: fc.constant('None'),
      conversionCRDs: maybe(fc.constantFrom(['gizmos.fixtures.bosun.dev'], ['x.example.com'])),
      rules: fc.array(
        fc.record({
          apiGroups: fc.constantFrom(['*'], ['apps'], ['operators.coreos.com']),
          resources: fc.constant(['deployments']),
        }),
        { maxLength: 2 },
      ),
    });
    fc.assert(
      fc.property(
        fc.constantFrom('deployment', 'helm'),
        maybe(fc.array(deployment, { maxLength: 3 })),
        fc.array(webhook, { maxLength: 3 }),
        (strategy, deployments, webhooks) => {
          const spec = structuredClone(original);
          spec.install = { strategy, spec: { ...spec.install.spec, deployments } };
          spec.webhookdefinitions = webhooks;
          csvOf(b).spec = spec;
          const csv = csvOf(b) as unknown as ClusterServiceVersion;
          const installed = installStrategyOf(csv, 'x');
          const refused = [
            ...(installed.ok ? [] : installed.errors),
            ...webhookDescriptionProblems(csv).filter((p) => p.reason !== undefined),
          ];
          const errors = validateBundle(b).errors.map((e) => `${e.field}: ${e.message}`);
          for (const p of refused) expect(errors).toContain(`${p.field}: ${p.message}`);
        },
      ),
    );
  });
});
