/**
 * The migration plan on real operators: every package of the OperatorHub 2021 corpus, imported as
 * a catalog, as if a Subscription on its default channel had installed the channel's head (its
 * real CSV, from the bundle's objects) in a namespace with a group for all namespaces. The plan
 * must refuse exactly the bundles that have a dependency, by their catalog properties or their
 * CSV's required APIs, naming each; the rest migrate to an extension of the package on the same
 * channel. Skips without BOSUN_CORPUS_DIR.
 */
import { describe, expect, it } from 'vitest';
import type { BundleDoc } from '../../../src/apis/fbc.js';
import type { ClusterServiceVersion, OperatorGroup, Subscription } from '../../../src/apis/operators.js';
import { importOperatorsDir } from '../../../src/catalog/import.js';
import { type CatalogOffer, planMigration } from '../../../src/cli/migrate-plan.js';
import { formatProblem } from '../../../src/util/result.js';
import { corpusDir } from '../bundle/upgrade/corpus.js';

if (!corpusDir)
  process.stderr.write(
    'skipping the migration plan corpus test: set BOSUN_CORPUS_DIR to shared/corpus/operatorhub-2021/upstream-community-operators\n',
  );

const Dependencies = ['olm.package.required', 'olm.gvk.required', 'olm.constraint', 'olm.label.required'];

/** The bundle's CSV, decoded from its `olm.bundle.object` properties. */
function csvOf(bundle: BundleDoc): ClusterServiceVersion | undefined {
  for (const p of bundle.properties) {
    if (p.type !== 'olm.bundle.object') continue;
    const obj = JSON.parse(Buffer.from((p.value as { data: string }).data, 'base64').toString('utf8')) as {
      kind?: string;
    };
    if (obj.kind === 'ClusterServiceVersion') return obj as ClusterServiceVersion;
  }
  return undefined;
}

describe.skipIf(!corpusDir)(
  'migrating the operators of the OperatorHub 2021 corpus (BOSUN_CORPUS_DIR)',
  () => {
    it(
      'refuses exactly the installed bundles with a dependency, naming it, and plans the rest on their channel',
      { timeout: 300_000 },
      async () => {
        const { config } = await importOperatorsDir(corpusDir!);
        const ns = 'operators';
        const tally = { planned: 0, refusedForDependencies: 0, other: [] as string[] };
        for (const pkg of config.packages) {
          const channel = config.channels.find(
            (c) => c.package === pkg.name && c.name === pkg.defaultChannel,
          );
          if (!channel) continue;
          // The head: the entry no other entry of the channel replaces or skips.
          const replaced = new Set(channel.entries.flatMap((e) => [e.replaces, ...(e.skips ?? [])]));
          const head = channel.entries.find((e) => !replaced.has(e.name));
          const bundle = config.bundles.find((b) => b.package === pkg.name && b.name === head?.name);
          const csv = bundle && csvOf(bundle);
          if (!bundle || !csv) continue;
          const installed: ClusterServiceVersion = {
            ...csv,
            metadata: { ...csv.metadata, name: bundle.name, namespace: ns, uid: `uid-${bundle.name}` },
            status: { phase: 'Succeeded' } as ClusterServiceVersion['status'],
          };
          const subscription = {
            apiVersion: 'operators.coreos.com/v1alpha1',
            kind: 'Subscription',
            metadata: { name: 'sub', namespace: ns },
            spec: { name: pkg.name, source: 'community', sourceNamespace: ns, channel: channel.name },
            status: { installedCSV: bundle.name, lastUpdated: '' },
          } as Subscription;
          const offer: CatalogOffer = {
            name: 'community',
            labels: {},
            priority: 0,
            serving: true,
            bundles: config.bundles.filter((b) => b.package === pkg.name),
            channels: config.channels.filter((c) => c.package === pkg.name),
          };
          const group = {
            metadata: { name: 'global', namespace: ns },
            spec: { serviceAccountName: 'installer' },
          } as OperatorGroup;
          const r = planMigration({
            subscription,
            operatorGroups: [group],
            installPlans: [],
            csv: installed,
            subscriptions: [subscription],
            extensions: [],
            csvs: [installed],
            catalogs: [offer],
          });
          const dependencies = bundle.properties.filter((p) => Dependencies.includes(p.type));
          const required = [
            ...(csv.spec.customresourcedefinitions?.required ?? []).map((c) => c.name),
            ...(csv.spec.apiservicedefinitions?.required ?? []).map((a) => `${a.version}.${a.group}`),
          ];
          if (dependencies.length + required.length > 0) {
            expect(r.ok, `${bundle.name} has dependencies, and was planned`).toBe(false);
            const text = r.ok ? '' : r.errors.map(formatProblem).join('\n');
            for (const p of dependencies) expect(text).toContain(`${p.type} ${JSON.stringify(p.value)}`);
            for (const name of required) expect(text).toContain(`requires ${name}`);
            tally.refusedForDependencies++;
          } else if (r.ok) {
            expect(r.value.extension.spec?.source.catalog).toEqual({
              packageName: pkg.name,
              channels: [channel.name],
            });
            expect(r.value.csv).toBe(bundle.name);
            tally.planned++;
          } else {
            tally.other.push(`${bundle.name}: ${r.errors.map(formatProblem).join('; ')}`);
          }
        }
        console.info(
          `corpus migration plans: ${tally.planned} planned, ${tally.refusedForDependencies} refused for dependencies, ${tally.other.length} refused otherwise`,
        );
        // A channel name v1 does not accept (a DNS-1123 subdomain) is the only other reason here.
        for (const line of tally.other)
          expect(line).toMatch(/spec\.channel: .* is not a channel name v1 accepts/);
        // Every package was looked at (none skipped for want of a head or a CSV).
        expect(tally.planned + tally.refusedForDependencies + tally.other.length).toBe(
          config.packages.length,
        );
        expect(tally.planned).toBeGreaterThan(100);
        expect(tally.refusedForDependencies).toBeGreaterThan(5);
      },
    );
  },
);
