/**
 * A ClusterExtension's `spec.config.inline.watchNamespace` (OLM v1's bundle configuration) on a
 * running manager, from ClusterCatalogs pushed to a real registry: the sample operator (which
 * supports AllNamespaces, OwnNamespace and SingleNamespace) installed for its own namespace, then
 * moved to watch another one and back to every namespace by changing the setting on the live
 * extension, its OperatorGroup, CSV and Deployment following; a configuration the bundle does not
 * take refused in v1's words with nothing installed; a namespace's own OperatorGroup that
 * disagrees reported, not changed. And real operators of the 2021 corpus (BOSUN_CORPUS_DIR): an
 * OwnNamespace-only one refused until watchNamespace is its namespace, then installed watching
 * it, and an AllNamespaces-only one refused a watchNamespace.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Deployment } from '@kubernetes/client-node';
import type { Condition, KubeObject } from '../../../src/apis/meta.js';
import { BundleAnnotation } from '../../../src/apis/bundle.js';
import { PropertyType } from '../../../src/apis/fbc.js';
import { type ClusterCatalog, type ClusterExtension, V1Resources } from '../../../src/apis/olmv1.js';
import { type ClusterServiceVersion, type OperatorGroup, Resources } from '../../../src/apis/operators.js';
import { buildBundleImage } from '../../../src/bundle/image.js';
import { readBundle, readBundleFiles } from '../../../src/bundle/read.js';
import { importPackageDir } from '../../../src/catalog/import.js';
import { Builtin } from '../../../src/kube/resources.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { pushImage } from '../../../src/oci/build.js';
import { RegistryClient } from '../../../src/oci/client.js';
import { formatReference, parseReference } from '../../../src/oci/reference.js';
import type { FileMap } from '../../../src/util/tar-write.js';
import { registryAvailable, startRegistry, type TestRegistry } from '../../support/registry.js';
import { eventually, freshNamespace } from '../support.js';
import {
  imageOnlyCatalog,
  pushCatalog,
  pushSampleBundles,
  SampleGroup,
  sampleCatalog,
} from '../controllers/image-catalogs.js';
import { uniqueGroup } from '../controllers/operator-support.js';
import { create, get, list, mergePatch, remove, startTestManager } from '../controllers/support.js';
import { extensionNamespace, extensionWhen } from './support.js';

const missing = await registryAvailable();
if (missing) console.warn(`the watchNamespace tests are skipped: ${missing}`);
const corpus = process.env.BOSUN_CORPUS_DIR;
if (!corpus)
  console.warn(
    'the watchNamespace test of real operators (kube-arangodb, keda) is skipped: set BOSUN_CORPUS_DIR to the OperatorHub corpus to run it',
  );

const CC = V1Resources.ClusterCatalog;
const CE = V1Resources.ClusterExtension;
const TargetsAnnotation = 'olm.targetNamespaces';
/** Real operators of the corpus: one supporting OwnNamespace only, one AllNamespaces only. */
const OwnOnly = { pkg: 'kube-arangodb', csv: 'kube-arangodb.v1.0.2' };
const AllOnly = { pkg: 'keda' };

let manager: RunningManager;
let registry: TestRegistry;
let push: RegistryClient;
const group = uniqueGroup();
const catalogLabel = { 'bosun.dev/test': `wn-${randomBytes(3).toString('hex')}` };
const catalogs: string[] = [];

beforeAll(async () => {
  if (missing) return;
  registry = await startRegistry({ kind: 'plain' });
  push = new RegistryClient();
  const images = await pushSampleBundles(push, registry.host, group);
  manager = await startTestManager();
  await publish(
    imageOnlyCatalog(
      await sampleCatalog(),
      (b) => images.get(b)!,
      (b) => b === 'bosun-sample.v0.2.1',
      group,
    ),
  );
});
afterAll(async () => {
  for (const name of catalogs) await remove(CC, '', name).catch(() => undefined);
  await manager?.stop();
  await push?.close();
});

/** A ClusterCatalog of `files`, labelled for this file's extensions; Serving before it returns. */
async function publish(files: FileMap, labels = catalogLabel): Promise<void> {
  const name = `wn-${randomBytes(3).toString('hex')}`;
  const ref = `${registry.host}/catalogs/${name}:latest`;
  await pushCatalog(push, ref, files);
  await create<ClusterCatalog>(CC, '', {
    apiVersion: 'olm.operatorframework.io/v1',
    kind: 'ClusterCatalog',
    metadata: { name, labels },
    spec: { source: { type: 'Image', image: { ref } } },
  });
  catalogs.push(name);
  await eventually(`ClusterCatalog ${name} to be Serving`, async () => {
    const cc = await get<ClusterCatalog>(CC, '', name);
    return condition(cc, 'Serving')?.status === 'True' ? cc : undefined;
  });
}

function extension(
  namespace: string,
  packageName: string,
  inline?: Record<string, unknown>,
  labels = catalogLabel,
): ClusterExtension {
  return {
    apiVersion: 'olm.operatorframework.io/v1',
    kind: 'ClusterExtension',
    metadata: { name: `wn-${randomBytes(3).toString('hex')}` },
    spec: {
      namespace,
      serviceAccount: { name: 'installer' },
      source: { sourceType: 'Catalog', catalog: { packageName, selector: { matchLabels: labels } } },
      ...(inline ? { config: { configType: 'Inline', inline } } : {}),
    },
  };
}

const condition = <C extends Pick<Condition, 'type'>>(
  o: { status?: { conditions?: C[] } } | undefined,
  type: string,
): C | undefined => o?.status?.conditions?.find((c) => c.type === type);

const progressing = (reason: string, says: string) => (ext: ClusterExtension) =>
  condition(ext, 'Progressing')?.reason === reason &&
  (condition(ext, 'Progressing')?.message ?? '').includes(says);
const installed = (ext: ClusterExtension) =>
  condition(ext, 'Installed')?.status === 'True' && condition(ext, 'Progressing')?.reason === 'Succeeded';

/** The operator watching `targets` (`''`: every namespace): its group, its CSV and its Deployment's pods say so. */
async function watching(ns: string, csv: string, deployment: string, targets: string): Promise<void> {
  await eventually(`the operator in ${ns} to watch ${JSON.stringify(targets)}`, async () => {
    const c = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, csv);
    const d = await get<V1Deployment & KubeObject>(Builtin.Deployment, ns, deployment);
    return c?.metadata.annotations?.[TargetsAnnotation] === targets &&
      c.status?.phase === 'Succeeded' &&
      d?.spec?.template.metadata?.annotations?.[TargetsAnnotation] === targets
      ? true
      : undefined;
  });
}

/** Nothing installed in `ns`: no InstallPlan, no CSV, no OperatorGroup of the extension's. */
async function nothingInstalled(ns: string): Promise<void> {
  expect(await list(Resources.InstallPlan, ns)).toEqual([]);
  expect(await list(Resources.ClusterServiceVersion, ns)).toEqual([]);
  expect(await list(Resources.OperatorGroup, ns)).toEqual([]);
}

describe.skipIf(missing !== undefined)('watchNamespace of a ClusterExtension', () => {
  it('installs the operator for its own namespace, then watches another and every namespace as the setting changes', async () => {
    const ns = await extensionNamespace('wn');
    const ext = extension(ns, 'bosun-sample', { watchNamespace: ns });
    const name = ext.metadata.name!;
    await create(CE, '', ext);
    await extensionWhen(name, installed, 'the extension to be Installed for its own namespace');
    const groups = await list<OperatorGroup>(Resources.OperatorGroup, ns);
    expect(groups.map((g) => [g.metadata.name, g.spec?.targetNamespaces])).toEqual([[name, [ns]]]);
    await watching(ns, 'bosun-sample.v0.2.1', 'bosun-sample-operator', ns);

    // SingleNamespace: another namespace, on the live extension. The group is retargeted and the
    // engine re-annotates the CSV and rolls the Deployment; nothing is installed again.
    const other = await freshNamespace('wn-watched');
    const uid = (await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, 'bosun-sample.v0.2.1'))
      ?.metadata.uid;
    await mergePatch(CE, '', name, { spec: { config: { inline: { watchNamespace: other } } } });
    await watching(ns, 'bosun-sample.v0.2.1', 'bosun-sample-operator', other);
    expect(
      (await list<OperatorGroup>(Resources.OperatorGroup, ns)).map((g) => g.spec?.targetNamespaces),
    ).toEqual([[other]]);
    expect(
      (await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, 'bosun-sample.v0.2.1'))?.metadata
        .uid,
    ).toBe(uid);
    expect(await list(Resources.InstallPlan, ns)).toHaveLength(1);
    await extensionWhen(name, installed, 'the extension to stay Installed');

    // Unset: every namespace again.
    await mergePatch(CE, '', name, { spec: { config: null } });
    await watching(ns, 'bosun-sample.v0.2.1', 'bosun-sample-operator', '');
    expect(
      (await list<OperatorGroup>(Resources.OperatorGroup, ns)).map((g) => g.spec?.targetNamespaces),
    ).toEqual([undefined]);
    // Uninstalling with the extension is clusterextension.test.ts's; the namespace goes after the file.
    await remove(CE, '', name);
  });

  it('refuses a configuration the bundle does not take in v1’s words, installing nothing', async () => {
    const ns = await extensionNamespace('wn');
    const ext = extension(ns, 'bosun-sample', { watchNamespace: 'Team_A', deploymentConfig: { env: [] } });
    await create(CE, '', ext);
    const refused = await extensionWhen(
      ext.metadata.name!,
      progressing(
        'InvalidConfiguration',
        'invalid ClusterExtension configuration: invalid configuration: multiple errors found',
      ),
      'the configuration to be refused',
    );
    expect(condition(refused, 'Progressing')).toMatchObject({ status: 'False', observedGeneration: 1 });
    const message = condition(refused, 'Progressing')?.message ?? '';
    expect(message).toContain(
      'unknown field "deploymentConfig": spec.config.inline.deploymentConfig is not served',
    );
    expect(message).toContain('spec.config.inline.watchNamespace "Team_A" is not a namespace name');
    expect(condition(refused, 'Installed')).toMatchObject({
      status: 'False',
      message: 'No bundle installed',
    });
    await nothingInstalled(ns);
    await remove(CE, '', ext.metadata.name!);
  });

  it('reports a namespace’s own OperatorGroup that targets other namespaces, naming both, and leaves it as it is', async () => {
    const ns = await extensionNamespace('wn');
    await create(Resources.OperatorGroup, ns, {
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: 'mine', namespace: ns },
      spec: { targetNamespaces: [ns] },
    });
    const elsewhere = await freshNamespace('wn-watched');
    const ext = extension(ns, 'bosun-sample', { watchNamespace: elsewhere });
    await create(CE, '', ext);
    const blocked = await extensionWhen(
      ext.metadata.name!,
      progressing('Blocked', ''),
      'the extension to be Blocked',
    );
    expect(condition(blocked, 'Progressing')).toMatchObject({
      status: 'False',
      message: `spec.config.inline.watchNamespace is "${elsewhere}", but OperatorGroup ${ns}/mine, which ClusterExtension ${ext.metadata.name} did not make, targets ["${ns}"]; the extension does not change a group it did not make: set watchNamespace to what the group targets, or change the group's spec.targetNamespaces to ["${elsewhere}"]`,
    });
    const groups = await list<OperatorGroup>(Resources.OperatorGroup, ns);
    expect(groups.map((g) => [g.metadata.name, g.spec?.targetNamespaces])).toEqual([['mine', [ns]]]);
    expect(await list(Resources.InstallPlan, ns)).toEqual([]);
    // The user's group changed to agree: the extension installs into it.
    await mergePatch(Resources.OperatorGroup, ns, 'mine', { spec: { targetNamespaces: [elsewhere] } });
    await extensionWhen(ext.metadata.name!, installed, 'the extension to install once the group agrees');
    await watching(ns, 'bosun-sample.v0.2.1', 'bosun-sample-operator', elsewhere);
    await remove(CE, '', ext.metadata.name!);
  });

  it('leaves the install mode to the engine’s OperatorGroup check when the catalog does not say which the bundle supports', async () => {
    // The sample 0.2.1 made OwnNamespace/SingleNamespace only, named by its image in a catalog
    // without olm.csv.metadata: the extension cannot know its install modes before it installs.
    const dir = join(import.meta.dirname, '../../../bundles/bosun-sample/0.2.1');
    const files = await readBundleFiles(dir);
    const read = await readBundle(dir);
    if (!files.ok || !read.ok) throw new Error(`${dir} does not read as a bundle`);
    const content: FileMap = new Map(
      [...files.value].map(([path, data]) => {
        const text = Buffer.from(data).toString('utf8').replaceAll(SampleGroup, group);
        const edited = text.replace(/(- type: AllNamespaces\n\s+supported:) true/, '$1 false');
        if (path.endsWith('.clusterserviceversion.yaml')) expect(edited).not.toBe(text);
        return [path, Buffer.from(edited)];
      }),
    );
    const ref = parseReference(`${registry.host}/bundles/${group.split('.')[0]}/own-single:v0.2.1`);
    const digest = await pushImage(push, ref, buildBundleImage(content, read.value.annotations));
    const image = formatReference({ registry: ref.registry, repository: ref.repository, digest });
    expect(read.value.annotations[BundleAnnotation.Package]).toBe('bosun-sample');
    const config = await sampleCatalog();
    config.bundles = config.bundles.map((b) => ({
      ...b,
      properties: b.properties.filter((p) => p.type !== PropertyType.CSVMetadata),
    }));
    const labels = { 'bosun.dev/test': `${catalogLabel['bosun.dev/test']}-nomodes` };
    await publish(
      imageOnlyCatalog(
        config,
        () => image,
        (b) => b === 'bosun-sample.v0.2.1',
        group,
      ),
      labels,
    );

    const ns = await extensionNamespace('wn');
    const ext = extension(ns, 'bosun-sample', undefined, labels);
    const name = ext.metadata.name!;
    await create(CE, '', ext);
    // Every namespace, which the CSV does not support: the engine fails it, and the extension says so.
    const refused = await extensionWhen(
      name,
      progressing('Retrying', 'AllNamespaces InstallModeType not supported'),
      'the CSV to be refused by the OperatorGroup check',
    );
    expect(condition(refused, 'Progressing')?.message).toMatch(
      /ClusterServiceVersion bosun-sample.v0.2.1 is Failed/,
    );
    expect(condition(refused, 'Installed')).toMatchObject({ status: 'False' });
    const csv = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, 'bosun-sample.v0.2.1');
    expect(csv?.status).toMatchObject({ phase: 'Failed', reason: 'UnsupportedOperatorGroup' });
    // Its own namespace, which it supports: the group is retargeted and the same CSV succeeds.
    await mergePatch(CE, '', name, {
      spec: { config: { configType: 'Inline', inline: { watchNamespace: ns } } },
    });
    await extensionWhen(name, installed, 'the extension to install once it watches its own namespace');
    await watching(ns, 'bosun-sample.v0.2.1', 'bosun-sample-operator', ns);
    await remove(CE, '', name);
  });

  it.skipIf(!corpus)(
    'real operators: an OwnNamespace-only one is refused until it watches its own namespace, an AllNamespaces-only one refuses watchNamespace',
    async () => {
      const docs: unknown[] = [];
      for (const pkg of [OwnOnly.pkg, AllOnly.pkg]) {
        const { cfg, result } = await importPackageDir(join(corpus!, pkg));
        expect(result.errors).toEqual([]);
        docs.push(...cfg.packages, ...cfg.channels, ...cfg.bundles);
      }
      await publish(new Map([['catalog.json', Buffer.from(docs.map((d) => JSON.stringify(d)).join('\n'))]]));

      const ns = await extensionNamespace('wn');
      const ext = extension(ns, OwnOnly.pkg);
      const name = ext.metadata.name!;
      await create(CE, '', ext);
      const required = await extensionWhen(
        name,
        progressing('InvalidConfiguration', 'required field "watchNamespace" is missing'),
        'the extension without watchNamespace to be refused',
      );
      expect(condition(required, 'Progressing')?.message).toBe(
        `invalid ClusterExtension configuration: invalid configuration: required field "watchNamespace" is missing: spec.config.inline.watchNamespace must name the namespace the operator watches ("${ns}", the install namespace), as bundle ${OwnOnly.csv} supports OwnNamespace and not AllNamespaces`,
      );
      await mergePatch(CE, '', name, {
        spec: { config: { configType: 'Inline', inline: { watchNamespace: 'other' } } },
      });
      const wrong = await extensionWhen(
        name,
        progressing('InvalidConfiguration', 'invalid value "other"'),
        'a watchNamespace other than its own to be refused',
      );
      expect(condition(wrong, 'Progressing')?.message).toContain(
        `must be "${ns}" (the namespace where the operator is installed) because this operator only supports OwnNamespace install mode`,
      );
      await nothingInstalled(ns);

      await mergePatch(CE, '', name, { spec: { config: { inline: { watchNamespace: ns } } } });
      await extensionWhen(name, installed, `${OwnOnly.pkg} to be Installed watching its own namespace`);
      await watching(ns, OwnOnly.csv, 'kube-arangodb', ns);

      const allNs = await extensionNamespace('wn');
      const all = extension(allNs, AllOnly.pkg, { watchNamespace: allNs });
      await create(CE, '', all);
      const notAllowed = await extensionWhen(
        all.metadata.name!,
        progressing('InvalidConfiguration', 'unknown field "watchNamespace"'),
        'watchNamespace to be refused for an AllNamespaces-only operator',
      );
      expect(condition(notAllowed, 'Progressing')?.message).toMatch(
        /spec\.config\.inline\.watchNamespace is not allowed, as bundle keda\.v[\d.]+ supports AllNamespaces only/,
      );
      await nothingInstalled(allNs);
      await remove(CE, '', all.metadata.name!);
      await remove(CE, '', name);
    },
  );
});
