/**
 * `bosun migrate subscription -n <namespace> <name>`: hands an operator a Subscription installed
 * (OLM v0) over to a ClusterExtension (OLM v1) without installing it again or restarting it.
 * Read (the cluster's objects, each ClusterCatalog's content through its catalogd API), plan
 * (../migrate-plan.ts, pure: the extension, or every reason not to), print, then act: create the
 * extension, which adopts the installed CSV (controllers/clusterextension.ts), and only once it
 * reports that CSV Installed and owns it, delete the Subscription and its InstallPlans. Until
 * then the Subscription keeps the operator: a wait that times out deletes nothing.
 */
import { type ClusterCatalog, type ClusterExtension, V1Resources } from '../../apis/olmv1.js';
import {
  type ClusterServiceVersion,
  type InstallPlan,
  type OperatorGroup,
  Resources,
  type Subscription,
} from '../../apis/operators.js';
import { ownedByExtension } from '../../controllers/clusterextension-plan.js';
import { collectionPath, type KubeClient, objectPath } from '../../kube/client.js';
import { isConditionTrue } from '../../kube/conditions.js';
import { isAlreadyExists, isNotFound } from '../../kube/errors.js';
import { UserError, UsageError } from '../../util/errors.js';
import { withClusterClient } from '../cluster-client.js';
import { bool, type Command, type CommandContext, str } from '../command.js';
import { readCatalogOffers } from '../migrate-catalogs.js';
import {
  describeExtension,
  InstallPlanSubscriptionLabel,
  type MigrationPlan,
  parseTimeout,
  planMigration,
  renderPlan,
} from '../migrate-plan.js';
import { formatProblem } from '../../util/result.js';

const DefaultTimeout = '2m';
const PollMs = 1_000;

const subscriptionCommand: Command = {
  name: 'subscription',
  summary: 'Move an operator from its Subscription to a ClusterExtension, without reinstalling it',
  usage: '-n <namespace> <subscription>',
  description:
    "Creates a ClusterExtension (OLM v1) that adopts the Subscription's installed CSV as it is: the\n" +
    "operator's Deployment, Pods and custom resources stay, nothing is installed again. Once the\n" +
    'extension reports that CSV Installed and owns it, the Subscription and its InstallPlans are\n' +
    "deleted; the namespace's OperatorGroup stays (the operator's targets are read from it). Refuses,\n" +
    'changing nothing, what v1 cannot express: a group that targets some namespaces, dependencies,\n' +
    'spec.config, a package another Subscription or ClusterExtension manages, a bundle no\n' +
    'ClusterCatalog serves. A Manual Subscription is pinned to its installed version.',
  args: { min: 1, max: 1 },
  options: {
    namespace: { type: 'string', short: 'n', valueName: 'NS', description: "The Subscription's namespace" },
    'dry-run': { type: 'boolean', description: 'Print the plan and change nothing' },
    'service-account': {
      type: 'string',
      valueName: 'NAME',
      description: "The extension's spec.serviceAccount (default: the OperatorGroup's serviceAccountName)",
    },
    timeout: {
      type: 'string',
      valueName: 'DURATION',
      description: `How long to wait for the extension to take over, e.g. 90s, 5m (default ${DefaultTimeout})`,
    },
    kubeconfig: {
      type: 'string',
      valueName: 'FILE',
      description: 'The cluster (default: KUBECONFIG, ~/.kube/config or in-cluster)',
    },
  },
  run: async ({ values, positionals, ctx }) => {
    const namespace = str(values, 'namespace');
    if (!namespace) throw new UsageError('-n <namespace> is required');
    const timeoutText = str(values, 'timeout') ?? DefaultTimeout;
    const timeoutMs = parseTimeout(timeoutText);
    if (timeoutMs === undefined || timeoutMs < 1_000)
      throw new UsageError(
        `--timeout: "${timeoutText}" is not a duration of a second or more (e.g. 90s, 2m)`,
      );
    const name = positionals[0]!;
    return withClusterClient(values, ctx, async (client) => {
      const plan = await readAndPlan(client, namespace, name, str(values, 'service-account'));
      ctx.stdout.write(renderPlan(plan));
      if (bool(values, 'dry-run')) {
        ctx.stdout.write('dry run: nothing changed\n');
        return 0;
      }
      await migrate(client, plan, timeoutMs, ctx);
      return 0;
    });
  },
};

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'Move operators from OLM v0 Subscriptions to OLM v1 ClusterExtensions',
  description: 'Commands that move what OLM v0 objects manage to OLM v1 objects, in place.',
  subcommands: [subscriptionCommand],
};

const items = async <T>(client: KubeClient, path: string, query?: Record<string, string>) =>
  (await client.request<{ items: T[] }>({ path, ...(query ? { query } : {}) })).items;

async function getIfPresent<T>(client: KubeClient, path: string): Promise<T | undefined> {
  try {
    return await client.request<T>({ path });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** The Subscription's InstallPlans: labelled with its name, or owned by it. */
const plansOf = (plans: readonly InstallPlan[], sub: Subscription) =>
  plans.filter(
    (ip) =>
      ip.metadata.labels?.[InstallPlanSubscriptionLabel] === sub.metadata.name ||
      (ip.metadata.ownerReferences ?? []).some(
        (o) => o.kind === 'Subscription' && o.uid === sub.metadata.uid,
      ),
  );

async function readAndPlan(
  client: KubeClient,
  namespace: string,
  name: string,
  serviceAccount: string | undefined,
): Promise<MigrationPlan> {
  const sub = await getIfPresent<Subscription>(client, objectPath(Resources.Subscription, name, namespace));
  if (!sub) throw new UserError(`Subscription ${namespace}/${name} does not exist`);
  const installed = sub.status?.installedCSV;
  const csv = installed
    ? await getIfPresent<ClusterServiceVersion>(
        client,
        objectPath(Resources.ClusterServiceVersion, installed, namespace),
      )
    : undefined;
  const needsProviders =
    (csv?.spec.customresourcedefinitions?.required?.length ?? 0) +
      (csv?.spec.apiservicedefinitions?.required?.length ?? 0) >
    0;
  const [operatorGroups, plans, subscriptions, extensions, csvs, catalogs] = await Promise.all([
    items<OperatorGroup>(client, collectionPath(Resources.OperatorGroup, namespace)),
    items<InstallPlan>(client, collectionPath(Resources.InstallPlan, namespace)),
    items<Subscription>(client, collectionPath(Resources.Subscription)),
    items<ClusterExtension>(client, collectionPath(V1Resources.ClusterExtension)),
    // Every CSV of the cluster only to name who provides a required API.
    needsProviders
      ? items<ClusterServiceVersion>(client, collectionPath(Resources.ClusterServiceVersion))
      : [],
    items<ClusterCatalog>(client, collectionPath(V1Resources.ClusterCatalog)),
  ]);
  const result = planMigration({
    subscription: sub,
    operatorGroups,
    installPlans: plansOf(plans, sub),
    csv,
    subscriptions,
    extensions,
    csvs,
    catalogs: await readCatalogOffers(catalogs, sub.spec.name),
    ...(serviceAccount !== undefined ? { serviceAccount } : {}),
  });
  if (!result.ok)
    throw new UserError(
      `cannot migrate Subscription ${namespace}/${name}, nothing changed:\n${result.errors.map((p) => `  - ${formatProblem(p)}`).join('\n')}`,
    );
  return result.value;
}

async function migrate(client: KubeClient, plan: MigrationPlan, timeoutMs: number, ctx: CommandContext) {
  const extName = plan.extension.metadata.name!;
  let created: ClusterExtension;
  try {
    created = await client.request<ClusterExtension>({
      method: 'POST',
      path: collectionPath(V1Resources.ClusterExtension),
      body: plan.extension,
    });
  } catch (err) {
    if (isAlreadyExists(err))
      throw new UserError(
        `ClusterExtension ${extName} already exists (made since the plan was read); nothing changed`,
      );
    throw err;
  }
  ctx.stdout.write(`created ClusterExtension ${extName}; waiting for it to adopt ${plan.csv}\n`);

  const extPath = objectPath(V1Resources.ClusterExtension, extName);
  const csvPath = objectPath(Resources.ClusterServiceVersion, plan.csv, plan.namespace);
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ext = await getIfPresent<ClusterExtension>(client, extPath);
    const csv = await getIfPresent<ClusterServiceVersion>(client, csvPath);
    // The same CSV object as planned (by uid), owned by this extension (by uid: not a namesake made again).
    const owned =
      ext !== undefined &&
      ext.metadata.uid === created.metadata.uid &&
      csv?.metadata.uid === plan.csvUid &&
      ownedByExtension(csv, ext);
    if (
      owned &&
      isConditionTrue(ext.status?.conditions, 'Installed') &&
      ext.status?.install?.bundle.name === plan.csv
    )
      break;
    // The extension is left for the user to look at; deleting it here could take the CSV with it.
    if (Date.now() >= until)
      throw new UserError(
        `ClusterExtension ${extName} did not take over ${plan.csv} within ${timeoutMs / 1000} s; nothing deleted: Subscription ${plan.namespace}/${plan.subscription} still manages the operator and the extension stays. Last seen: ${describeExtension(ext, owned, plan.csv)}. To give up, delete the extension with \`kubectl delete clusterextension ${extName} --cascade=orphan\`: once it owns the CSV, a plain delete uninstalls the operator`,
      );
    await new Promise((r) => setTimeout(r, PollMs));
  }
  ctx.stdout.write(`ClusterExtension ${extName} is Installed on ${plan.csv} and owns it\n`);

  const subPath = objectPath(Resources.Subscription, plan.subscription, plan.namespace);
  const sub = await getIfPresent<Subscription>(client, subPath);
  if (sub) {
    await client.request({ method: 'DELETE', path: subPath }).catch(ignoreNotFound);
    ctx.stdout.write(`deleted Subscription ${plan.namespace}/${plan.subscription}\n`);
    // Read again: a plan made since the plan was printed goes too.
    const plans = plansOf(
      await items<InstallPlan>(client, collectionPath(Resources.InstallPlan, plan.namespace)),
      sub,
    );
    for (const ip of plans) {
      await client
        .request({
          method: 'DELETE',
          path: objectPath(Resources.InstallPlan, ip.metadata.name ?? '', plan.namespace),
        })
        .catch(ignoreNotFound);
      ctx.stdout.write(`deleted InstallPlan ${plan.namespace}/${ip.metadata.name}\n`);
    }
  }
  ctx.stdout.write(
    `kept OperatorGroup ${plan.namespace}/${plan.operatorGroup}: the engine reads the operator's target namespaces from it\n` +
      `migrated: ClusterExtension ${extName} manages ${plan.csv}\n`,
  );
}

function ignoreNotFound(err: unknown): void {
  if (!isNotFound(err)) throw err;
}
