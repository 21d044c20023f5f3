import { describe, expect, it } from 'vitest';
import type { BundleDoc, Property } from '../../../src/apis/fbc.js';
import { decodeBundle } from '../../../src/install/index.js';
import { formatProblem } from '../../../src/util/result.js';
import { BundleName, bundleObjectProperty, manifestFiles, manifestText, sampleBundleDoc } from './support.js';

const csvText = manifestText('sample-operator.clusterserviceversion.yaml');

function docWith(objects: Property[]): BundleDoc {
  return { ...sampleBundleDoc([]), properties: objects };
}

function yamlObject(kindLine: string, name: string, extra = ''): Property {
  return bundleObjectProperty(`${kindLine}\nmetadata:\n  name: ${name}\n${extra}`);
}

function problems(doc: BundleDoc): string[] {
  const r = decodeBundle(doc);
  if (r.ok) throw new Error('expected the bundle to be rejected');
  return r.errors.map(formatProblem);
}

describe('decodeBundle', () => {
  it('decodes the sample bundle into its CSV and every other object, classified by kind', () => {
    const r = decodeBundle(sampleBundleDoc());
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.name).toBe(BundleName);
    expect(r.value.package).toBe('sample-operator');
    expect(r.value.csv.metadata.name).toBe(BundleName);
    expect(r.value.objects.map((o) => `${o.kind}/${o.name} ${o.info.phase}`).sort()).toEqual([
      'ConfigMap/sample-operator-config Resources',
      'CustomResourceDefinition/widgets.example.com CRDs',
      'Service/sample-operator-metrics Resources',
      'ServiceAccount/sample-webhook ServiceAccounts',
    ]);
  });

  it('keeps the non-manifest properties for the CSV properties annotation', () => {
    const r = decodeBundle(sampleBundleDoc());
    if (!r.ok) throw new Error('decode failed');
    expect(r.value.properties.map((p) => p.type)).toEqual(['olm.package', 'olm.gvk']);
  });

  it('reads an annotation without a value as "" (as OLM decodes it into a map of strings), with a warning', () => {
    const r = decodeBundle(
      docWith([
        bundleObjectProperty(csvText),
        yamlObject('apiVersion: v1\nkind: ConfigMap', 'cm', '  annotations:\n    createdAt:\n    kept: x\n'),
      ]),
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.value.objects[0]?.object.metadata.annotations).toEqual({ createdAt: '', kept: 'x' });
    expect(r.value.warnings.map(formatProblem)).toEqual([
      `bundle ${BundleName}, ConfigMap/cm: metadata.annotations.createdAt: has no value; set to ""`,
    ]);
  });

  it('installs a CSV that names another API group as operators.coreos.com/v1alpha1, as OLM does', () => {
    const r = decodeBundle(
      docWith([
        bundleObjectProperty(csvText.replace(/^apiVersion: .*$/m, 'apiVersion: example.com/v1alpha1')),
      ]),
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.value.csv.apiVersion).toBe('operators.coreos.com/v1alpha1');
    expect(r.value.warnings.map(formatProblem)).toEqual([
      `bundle ${BundleName}, ClusterServiceVersion/${BundleName}: apiVersion: example.com/v1alpha1 is not where ClusterServiceVersion is served; installed as operators.coreos.com/v1alpha1`,
    ]);
  });

  it('reads manifests encoded as JSON as well as YAML', () => {
    const json = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'from-json' },
      data: { a: 'b' },
    });
    const r = decodeBundle(docWith([bundleObjectProperty(csvText), bundleObjectProperty(json)]));
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.value.objects[0]?.object).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'from-json' },
      data: { a: 'b' },
    });
  });

  it('drops status, timestamps and the namespace a bundle object was exported with', () => {
    const r = decodeBundle(
      docWith([
        bundleObjectProperty(csvText),
        yamlObject(
          'apiVersion: v1\nkind: ConfigMap',
          'exported',
          '  namespace: somewhere\n  uid: 1234\n  creationTimestamp: "2020-01-01T00:00:00Z"\n  labels:\n    a: b\nstatus:\n  x: 1\n',
        ),
      ]),
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.value.objects[0]?.object).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'exported', labels: { a: 'b' } },
    });
  });

  it('accepts every kind Bosun installs', () => {
    const kinds = [
      ['v1', 'Secret'],
      ['rbac.authorization.k8s.io/v1', 'Role'],
      ['rbac.authorization.k8s.io/v1', 'RoleBinding'],
      ['rbac.authorization.k8s.io/v1', 'ClusterRole'],
      ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'],
      ['monitoring.coreos.com/v1', 'PrometheusRule'],
      ['monitoring.coreos.com/v1', 'ServiceMonitor'],
      ['monitoring.coreos.com/v1', 'PodMonitor'],
      ['policy/v1', 'PodDisruptionBudget'],
      ['scheduling.k8s.io/v1', 'PriorityClass'],
      ['autoscaling.k8s.io/v1', 'VerticalPodAutoscaler'],
      ['networking.k8s.io/v1', 'NetworkPolicy'],
    ];
    const r = decodeBundle(
      docWith([
        bundleObjectProperty(csvText),
        ...kinds.map(([v, k]) => yamlObject(`apiVersion: ${v}\nkind: ${k}`, `a-${k?.toLowerCase()}`)),
      ]),
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.value.objects.map((o) => o.kind)).toEqual(kinds.map(([, k]) => k));
  });

  it('converts manifests of removed API versions, and reports each conversion as a warning', () => {
    const r = decodeBundle(
      docWith([
        bundleObjectProperty(csvText),
        yamlObject(
          'apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition',
          'gizmos.example.com',
          [
            'spec:',
            '  group: example.com',
            '  version: v1alpha1',
            '  names: {kind: Gizmo, plural: gizmos}',
            '  additionalPrinterColumns:',
            '  - {name: Size, type: integer, JSONPath: .spec.size}',
            '  validation:',
            '    openAPIV3Schema:',
            '      properties:',
            '        spec:',
            '          properties:',
            '            size: {type: integer}',
            '            tags: {type: array, items: {type: string}, uniqueItems: true}',
            '',
          ].join('\n'),
        ),
        yamlObject('apiVersion: rbac.authorization.k8s.io/v1beta1\nkind: ClusterRole', 'metrics-reader'),
      ]),
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const [crd, role] = r.value.objects;
    expect(crd).toMatchObject({
      group: 'apiextensions.k8s.io',
      version: 'v1',
      kind: 'CustomResourceDefinition',
    });
    expect(crd?.object.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd?.object.spec).toMatchObject({
      scope: 'Namespaced',
      names: { kind: 'Gizmo', plural: 'gizmos', singular: 'gizmo', listKind: 'GizmoList' },
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
        },
      ],
    });
    expect(role?.object.apiVersion).toBe('rbac.authorization.k8s.io/v1');
    expect(r.value.warnings.map(formatProblem)).toEqual([
      `bundle ${BundleName}, CustomResourceDefinition/gizmos.example.com: apiVersion: apiextensions.k8s.io/v1beta1 is not served by Kubernetes 1.22 and later; converted to apiextensions.k8s.io/v1`,
      `bundle ${BundleName}, CustomResourceDefinition/gizmos.example.com: spec.validation.openAPIV3Schema.properties.spec.properties.tags.uniqueItems: uniqueItems: true is not allowed in apiextensions.k8s.io/v1; dropped, so repeated items are accepted`,
      `bundle ${BundleName}, ClusterRole/metrics-reader: apiVersion: rbac.authorization.k8s.io/v1beta1 is not served by Kubernetes 1.22 and later; converted to rbac.authorization.k8s.io/v1`,
    ]);
  });

  it('applies once an object a bundle ships in both a removed and a served version', () => {
    const rules = 'rules:\n- nonResourceURLs: [/metrics]\n  verbs: [get]\n';
    const r = decodeBundle(
      docWith([
        bundleObjectProperty(csvText),
        yamlObject('apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole', 'metrics-reader', rules),
        yamlObject(
          'apiVersion: rbac.authorization.k8s.io/v1beta1\nkind: ClusterRole',
          'metrics-reader',
          rules,
        ),
      ]),
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.value.objects.map((o) => `${o.object.apiVersion} ${o.kind}/${o.name}`)).toEqual([
      'rbac.authorization.k8s.io/v1 ClusterRole/metrics-reader',
    ]);
    expect(r.value.warnings.map(formatProblem)).toEqual([
      `bundle ${BundleName}, ClusterRole/metrics-reader: apiVersion: rbac.authorization.k8s.io/v1beta1 is not served by Kubernetes 1.22 and later; converted to rbac.authorization.k8s.io/v1`,
      `bundle ${BundleName}, ClusterRole/metrics-reader: metadata.name: properties[2] is the same object as properties[1] once converted; it is applied once`,
    ]);
  });

  it('still refuses two different objects of the same kind and name, whatever their versions', () => {
    const r = decodeBundle(
      docWith([
        bundleObjectProperty(csvText),
        yamlObject('apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole', 'reader', 'rules: []\n'),
        yamlObject(
          'apiVersion: rbac.authorization.k8s.io/v1beta1\nkind: ClusterRole',
          'reader',
          'rules:\n- nonResourceURLs: [/metrics]\n  verbs: [get]\n',
        ),
      ]),
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map(formatProblem)).toEqual([
      `bundle ${BundleName}, ClusterRole/reader: metadata.name: properties[2] has the same kind and name as properties[1]; each object must be unique`,
    ]);
  });

  it('a bundle of served API versions has no warnings', () => {
    const r = decodeBundle(sampleBundleDoc());
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.value.warnings).toEqual([]);
  });

  const csv = bundleObjectProperty(csvText);
  const rejections: { name: string; properties: Property[]; expected: string[] }[] = [
    {
      name: 'a kind Bosun does not install, naming the bundle, the object and the field',
      properties: [csv, yamlObject('apiVersion: apps/v1\nkind: Deployment', 'stray')],
      expected: [
        `bundle ${BundleName}, Deployment/stray: kind: Deployment is not a kind Bosun installs from a bundle; supported: CustomResourceDefinition, ServiceAccount, ClusterRole, Role, ClusterRoleBinding, RoleBinding, Service, ConfigMap, Secret, PriorityClass, NetworkPolicy, PodDisruptionBudget, VerticalPodAutoscaler, PrometheusRule, ServiceMonitor, PodMonitor, ClusterServiceVersion`,
      ],
    },
    {
      name: 'a supported kind under the wrong API group',
      properties: [csv, yamlObject('apiVersion: example.com/v1\nkind: Service', 'fake')],
      expected: [
        `bundle ${BundleName}, Service/fake: apiVersion: example.com/v1 is not where Service is served; expected group core (v1)`,
      ],
    },
    {
      name: 'a v1beta1 CRD that no conversion can complete (no storage version)',
      properties: [
        csv,
        yamlObject(
          'apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition',
          'olds.example.com',
          'spec:\n  group: example.com\n  names: {kind: Old, plural: olds}\n  versions:\n  - {name: v1, served: true, storage: false}\n',
        ),
      ],
      expected: [
        `bundle ${BundleName}, CustomResourceDefinition/olds.example.com: spec.versions: 0 versions are marked storage; mark exactly one version storage: true (needed to convert apiextensions.k8s.io/v1beta1 to apiextensions.k8s.io/v1)`,
      ],
    },
    {
      name: 'a removed API without a successor',
      properties: [csv, yamlObject('apiVersion: policy/v1beta1\nkind: PodSecurityPolicy', 'restricted')],
      expected: [
        `bundle ${BundleName}, PodSecurityPolicy/restricted: apiVersion: policy/v1beta1 PodSecurityPolicy was removed in Kubernetes 1.25 without a successor; remove it from the bundle; Pod Security admission (namespace labels) replaces it`,
      ],
    },
    {
      name: 'a version Kubernetes does not serve the kind in',
      properties: [csv, yamlObject('apiVersion: rbac.authorization.k8s.io/v1alpha1\nkind: Role', 'ancient')],
      expected: [
        `bundle ${BundleName}, Role/ancient: apiVersion: rbac.authorization.k8s.io/v1alpha1 is not a version Kubernetes serves Role in; use rbac.authorization.k8s.io/v1`,
      ],
    },
    {
      name: 'a bundle without a CSV',
      properties: [yamlObject('apiVersion: v1\nkind: ConfigMap', 'lonely')],
      expected: [`bundle ${BundleName}: properties: has no ClusterServiceVersion; a bundle needs one`],
    },
    {
      name: 'a bundle with two CSVs',
      properties: [
        csv,
        bundleObjectProperty(csvText.replace('name: sample-operator.v0.2.0', 'name: other.v1.0.0')),
      ],
      expected: [
        `bundle ${BundleName}: properties: has 2 ClusterServiceVersions: sample-operator.v0.2.0 (properties[0]), other.v1.0.0 (properties[1])`,
      ],
    },
    {
      name: 'a CSV whose name is not the bundle name',
      properties: [
        bundleObjectProperty(csvText.replace('name: sample-operator.v0.2.0', 'name: other.v1.0.0')),
      ],
      expected: [
        `bundle ${BundleName}, ClusterServiceVersion/other.v1.0.0: metadata.name: must be the bundle's name, ${BundleName}`,
      ],
    },
    {
      name: 'a manifest that is not base64',
      properties: [csv, { type: 'olm.bundle.object', value: { data: 'not*base64!' } }],
      expected: [`bundle ${BundleName}: properties[1].value.data: is not valid base64`],
    },
    {
      name: 'a manifest referring to a file instead of carrying data',
      properties: [csv, { type: 'olm.bundle.object', value: { ref: 'objects/cm.yaml' } }],
      expected: [
        `bundle ${BundleName}: properties[1].value.data: refers to a file (ref); only inline data can be installed from a catalog`,
      ],
    },
    {
      name: 'a manifest that is neither JSON nor YAML',
      properties: [csv, bundleObjectProperty('kind: [unclosed')],
      expected: [`bundle ${BundleName}: properties[1].value.data: is neither JSON nor YAML`],
    },
    {
      name: 'a manifest holding two documents',
      properties: [csv, bundleObjectProperty('kind: A\n---\nkind: B\n')],
      expected: [
        `bundle ${BundleName}: properties[1].value.data: decodes to 2 documents; each olm.bundle.object holds one`,
      ],
    },
    {
      name: 'an object without apiVersion or name',
      properties: [csv, bundleObjectProperty('kind: ConfigMap\nmetadata:\n  generateName: cm-\n')],
      expected: [
        `bundle ${BundleName}, ConfigMap/?: apiVersion: must be set (properties[1])`,
        `bundle ${BundleName}, ConfigMap/?: metadata.name: must be set (properties[1]); generateName cannot be applied`,
      ],
    },
    {
      name: 'labels that are not strings',
      properties: [
        csv,
        yamlObject('apiVersion: v1\nkind: ConfigMap', 'cm', '  labels:\n    enabled: true\n'),
      ],
      expected: [
        `bundle ${BundleName}, ConfigMap/cm: metadata.labels: must map strings to strings (quote values like true or 1)`,
      ],
    },
    {
      name: 'two objects of the same kind and name',
      properties: [
        csv,
        yamlObject('apiVersion: v1\nkind: ConfigMap', 'twice'),
        yamlObject('apiVersion: v1\nkind: ConfigMap', 'twice'),
      ],
      expected: [
        `bundle ${BundleName}, ConfigMap/twice: metadata.name: properties[2] has the same kind and name as properties[1]; each object must be unique`,
      ],
    },
    {
      name: 'a CSV with an install strategy other than deployment',
      properties: [bundleObjectProperty(csvText.replace('strategy: deployment', 'strategy: helm'))],
      expected: [
        `bundle ${BundleName}, ClusterServiceVersion/${BundleName}: spec.install.strategy: "helm" is not supported; use "deployment"`,
      ],
    },
    {
      name: 'a permission without a ServiceAccount',
      properties: [
        bundleObjectProperty(
          csvText.replace('- serviceAccountName: sample-webhook', '- serviceAccountName: ""'),
        ),
      ],
      expected: [
        `bundle ${BundleName}, ClusterServiceVersion/${BundleName}: spec.install.spec.permissions[1].serviceAccountName: is required: the ServiceAccount granted the rules`,
      ],
    },
    {
      name: 'two strategy Deployments of the same name',
      properties: [
        bundleObjectProperty(
          csvText.replace('- name: sample-operator-webhook', '- name: sample-operator-controller'),
        ),
      ],
      expected: [
        `bundle ${BundleName}, ClusterServiceVersion/${BundleName}: spec.install.spec.deployments[1].name: deployment "sample-operator-controller" is declared twice`,
      ],
    },
  ];

  for (const c of rejections) {
    it(`rejects ${c.name}`, () => {
      const got = problems(docWith(c.properties));
      expect(got).toHaveLength(c.expected.length);
      for (const [i, e] of c.expected.entries()) expect(got[i]).toContain(e);
    });
  }

  it('reports every problem of a bundle in one pass', () => {
    const got = problems(
      docWith([
        csv,
        yamlObject('apiVersion: apps/v1\nkind: Deployment', 'one'),
        yamlObject('apiVersion: batch/v1\nkind: Job', 'two'),
        { type: 'olm.bundle.object', value: { data: '%%%' } },
      ]),
    );
    expect(got).toHaveLength(3);
  });

  it('says where the manifests are when a bundle carries only an image', () => {
    const doc: BundleDoc = { ...sampleBundleDoc([]), image: 'quay.io/example/sample-bundle:v0.2.0' };
    expect(problems(doc)).toEqual([
      `bundle ${BundleName}: properties: has no olm.bundle.object properties; its manifests are in the image quay.io/example/sample-bundle:v0.2.0`,
    ]);
  });

  it('decodes the fixture files in any order to the same objects', () => {
    const forward = decodeBundle(sampleBundleDoc());
    const backward = decodeBundle(sampleBundleDoc(manifestFiles().reverse().map(manifestText)));
    if (!forward.ok || !backward.ok) throw new Error('decode failed');
    const names = (b: typeof forward.value) => b.objects.map((o) => `${o.kind}/${o.name}`).sort();
    expect(names(backward.value)).toEqual(names(forward.value));
  });
});
