/**
 * The operators a ClusterExtension's bundle needs, the I/O side (the rules are pure, in
 * ./clusterextension-dependencies.ts): what the extension's catalogs offer and the cluster has,
 * which ClusterExtensions and Subscriptions already manage each needed package, and the
 * ClusterExtension generated for one that nobody manages.
 */
import { type BundleDoc, type GVKProperty, PropertyType } from '../apis/fbc.js';
import type { ClusterExtension } from '../apis/olmv1.js';
import { V1Resources } from '../apis/olmv1.js';
import { CSVPhase } from '../apis/operators.js';
import { objectKey } from '../kube/cache.js';
import { collectionPath } from '../kube/client.js';
import { isAlreadyExists } from '../kube/errors.js';
import { catalogSelector } from '../olmv1/catalog-selector.js';
import { type Need, needState, needsOf } from './clusterextension-dependencies.js';
import { CatalogNameLabel } from './clusterextension-plan.js';
import type { ClusterExtensionContext } from './clusterextension.js';

/**
 * What the bundle still waits for among the operators it needs (./clusterextension-dependencies.ts),
 * or undefined once each is installed in its range. A package no extension or Subscription
 * manages gets a ClusterExtension generated for it; the bundle is installed once every one of
 * them reports `Installed`.
 */
export async function unmetDependencies(
  ctx: ClusterExtensionContext,
  ext: ClusterExtension,
  bundle: BundleDoc,
): Promise<string | undefined> {
  const catalog = ext.spec!.source.catalog!;
  const selector = catalogSelector(catalog.selector);
  const snapshots = ctx.informers.clusterCatalogs
    .list()
    .filter((cc) => cc.spec.availabilityMode !== 'Unavailable')
    .filter(
      (cc) =>
        selector.ok && selector.value({ ...cc.metadata.labels, [CatalogNameLabel]: cc.metadata.name ?? '' }),
    )
    .flatMap(
      (cc) => ctx.clusterCatalogContent.bundles.get({ namespace: '', name: cc.metadata.name ?? '' }) ?? [],
    );
  const providers = (gvk: GVKProperty) =>
    snapshots.flatMap((s) => s.config.bundles.filter((b) => providesGVK(b, gvk)).map((b) => b.package));
  const clusterHas = (gvk: GVKProperty) =>
    ctx.informers.crds
      .list()
      .some(
        (crd) =>
          crd.spec?.group === gvk.group &&
          crd.spec.names?.kind === gvk.kind &&
          (crd.spec.versions ?? []).some((v) => v.name === gvk.version && v.served !== false),
      );
  const needs = needsOf(bundle, providers, clusterHas);
  if (!needs.ok) return needs.message;
  const waiting: string[] = [];
  for (const need of needs.needs) {
    const unmet = await unmetNeed(ctx, ext, need);
    if (unmet !== undefined) waiting.push(unmet);
  }
  return waiting.length > 0 ? waiting.join('; ') : undefined;
}

async function unmetNeed(
  ctx: ClusterExtensionContext,
  ext: ClusterExtension,
  need: Need,
): Promise<string | undefined> {
  const { informers } = ctx;
  const subscribedVersions = informers.subscriptions
    .list()
    .filter((sub) => sub.spec.name === need.packageName && sub.status?.installedCSV)
    .map((sub) => informers.csvs.get(objectKey(sub.metadata.namespace, sub.status!.installedCSV!)))
    .filter((csv) => csv?.status?.phase === CSVPhase.Succeeded)
    .map((csv) => csv!.spec.version ?? '');
  const managing = informers.clusterExtensions
    .list()
    .find((e) => e.spec?.source.catalog?.packageName === need.packageName && !e.metadata.deletionTimestamp);
  const installed = managing?.status?.conditions?.some((c) => c.type === 'Installed' && c.status === 'True')
    ? managing.status.install?.bundle
    : undefined;
  const state = needState(ext, need, {
    subscribedVersions,
    ...(managing
      ? { extension: { name: managing.metadata.name ?? '', ...(installed ? { installed } : {}) } }
      : {}),
  });
  if (state.kind === 'met') return undefined;
  if (state.kind === 'generate') {
    const generated = state.extension;
    try {
      await ctx.client.request({
        method: 'POST',
        path: collectionPath(V1Resources.ClusterExtension),
        body: generated,
      });
      ctx.log.info(
        { dependency: generated.metadata.name, package: need.packageName },
        'clusterextension generated for a dependency',
      );
      void ctx.events.normal(
        ext,
        'DependencyGenerated',
        `ClusterExtension ${generated.metadata.name} generated: ${state.message}`,
      );
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
  return state.message;
}

/** Whether a bundle provides the API (its `olm.gvk` properties). */
function providesGVK(b: BundleDoc, gvk: GVKProperty): boolean {
  return b.properties.some((p) => {
    if (p.type !== PropertyType.GVK) return false;
    const v = p.value as GVKProperty;
    return v.group === gvk.group && v.version === gvk.version && v.kind === gvk.kind;
  });
}
