/**
 * The JSON the web catalog's server sends and its page reads: one source of truth for both sides
 * (the server builds these in src/web/view.ts, the page renders them), with the API's paths.
 */

/** What the server has catalogs from: a cluster (the manager) or one directory (`bosun catalog serve`). */
export const CatalogMode = { Cluster: 'cluster', Directory: 'directory' } as const;
export type CatalogMode = (typeof CatalogMode)[keyof typeof CatalogMode];

export const EdgeKind = { Replaces: 'replaces', Skips: 'skips', SkipRange: 'skipRange' } as const;
export type EdgeKind = (typeof EdgeKind)[keyof typeof EdgeKind];

/**
 * The routes of the JSON API, relative to the page (which is always the server's root, `/`), so
 * the page also works behind a proxy that serves it under a path.
 */
export const ApiPath = {
  Index: 'api/index',
  /** `api/packages/<catalog id>/<package>` (each part URI-encoded). */
  Packages: 'api/packages/',
  /** `api/icons/<catalog id>/<package>` (each part URI-encoded). */
  Icons: 'api/icons/',
  /** POST with `Authorization: Bearer <token>` signs in, DELETE signs out (the manager only). */
  Session: 'api/session',
} as const;

export interface CatalogInfo {
  /** Unique among the catalogs shown: `namespace/name` of a CatalogSource, or a directory's name. */
  id: string;
  name: string;
  namespace?: string;
  displayName: string;
  publisher?: string;
}

/** Where a package is installed in the cluster, as its Subscription and CSV say. */
export interface InstallView {
  namespace: string;
  subscription: string;
  channel?: string;
  installedCSV?: string;
  installedVersion?: string;
  /** The installed CSV's `status.phase`. */
  phase?: string;
  /** The Subscription's `status.state`. */
  state?: string;
  /** The Subscription's approval (`Automatic` when unset, as in OLM). */
  approval: string;
  /** A CSV newer than the installed one: the one the Subscription moves to, or the head of its channel. */
  upgrade?: { csv: string; version?: string; waitsForApproval: boolean };
  /** The first install waits for its InstallPlan to be approved. */
  installWaitsForApproval?: boolean;
}

export interface PackageSummary {
  /** `<catalog id>/<package name>`, unique among the packages shown. */
  id: string;
  catalog: string;
  name: string;
  displayName: string;
  /** One line (the CSV's `description` annotation, else the first paragraph of its description). */
  description: string;
  provider: string;
  keywords: string[];
  categories: string[];
  /** The CSV's `capabilities` annotation (Basic Install … Auto Pilot). */
  capability?: string;
  /** The install modes the default channel's head supports. */
  installModes: string[];
  defaultChannel: string;
  /** The default channel head's version. */
  version?: string;
  /** The icon's URL on this server. */
  icon?: string;
  deprecation?: string;
  installs: InstallView[];
}

export interface IndexView {
  mode: CatalogMode;
  /**
   * Set where what the page shows depends on who asks (the manager): anyone sees the global
   * catalogs; a viewer signed in with a token sees what Kubernetes lets that user list.
   */
  viewer?: { signIn: boolean; user?: string };
  catalogs: CatalogInfo[];
  packages: PackageSummary[];
}

export interface EntryView {
  name: string;
  version?: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
  deprecation?: string;
}

export interface EdgeView {
  /** The bundle upgraded from. */
  from: string;
  /** The bundle upgraded to. */
  to: string;
  kind: EdgeKind;
}

export interface ChannelView {
  name: string;
  head: string;
  headVersion?: string;
  deprecation?: string;
  /** Newest first (by version; bundles without one last, by name). */
  entries: EntryView[];
  /** Upgrade edges between entries of the channel (replaces, skips, and skipRange matches). */
  edges: EdgeView[];
}

export interface ApiView {
  name: string;
  version?: string;
  kind?: string;
  displayName?: string;
  description?: string;
}

export interface Link {
  name: string;
  /** Only http, https and mailto URLs are sent; others are dropped by the server. */
  url: string;
}

/** An OperatorGroup of the cluster, for the install instructions. */
export interface OperatorGroupInfo {
  namespace: string;
  name: string;
  /** Empty: every namespace. */
  targetNamespaces: string[];
}

/** What the install instructions need beyond the package. */
export interface InstallContext {
  /** The CatalogSource a Subscription names. */
  source: { name: string; namespace: string };
  /** Set when the catalog is not in the cluster yet (`bosun catalog serve`): the CatalogSource to create. */
  catalogSource?: { address: string; displayName: string };
  /** The namespace holding an OperatorGroup for every namespace (OLM's `operators`), if any. */
  globalOperatorsNamespace?: string;
  /** The catalog is not in the global catalog namespace: only Subscriptions in its own namespace see it. */
  onlyNamespace?: string;
  /** Known only against a cluster: its OperatorGroups and namespaces. */
  cluster?: { operatorGroups: OperatorGroupInfo[]; namespaces: string[] };
}

export interface PackageDetail extends PackageSummary {
  /** The description rendered from Markdown and sanitised on the server. */
  descriptionHtml: string;
  /** The description was longer than the server renders; it was cut. */
  descriptionTruncated: boolean;
  providerUrl?: string;
  maintainers: { name?: string; email?: string }[];
  links: Link[];
  maturity?: string;
  repository?: string;
  containerImage?: string;
  createdAt?: string;
  minKubeVersion?: string;
  /** The CSV's `operatorframework.io/suggested-namespace` annotation. */
  suggestedNamespace?: string;
  channels: ChannelView[];
  apis: { owned: ApiView[]; required: ApiView[] };
  install: InstallContext;
}
