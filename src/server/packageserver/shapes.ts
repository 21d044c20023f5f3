/**
 * The Kubernetes API shapes the PackageManifest API answers with besides PackageManifests:
 * `Status` for errors, discovery documents, and `Table` for kubectl's default output (OLM's
 * columns: NAME, CATALOG, AGE).
 */
import {
  PackageManifestKind,
  PackageManifestResource,
  PackagesApiVersion,
  PackagesGroup,
  PackagesVersion,
  type PackageManifest,
} from '../../apis/packages.js';

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'Expired'
  | 'Gone'
  | 'TooManyRequests'
  | 'InternalError';

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: StatusReason;
  details?: { name?: string; group?: string; kind?: string };
  code: number;
}

export function failure(
  code: number,
  reason: StatusReason,
  message: string,
  details?: Status['details'],
): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  };
}

export function notFound(name: string): Status {
  return failure(404, 'NotFound', `${PackageManifestResource}.${PackagesGroup} "${name}" not found`, {
    name,
    group: PackagesGroup,
    kind: PackageManifestResource,
  });
}

/** `/apis/packages.operators.coreos.com/v1`: the resources of the group version. */
export function apiResourceList(): Record<string, unknown> {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: PackagesApiVersion,
    resources: [
      {
        name: PackageManifestResource,
        singularName: 'packagemanifest',
        namespaced: true,
        kind: PackageManifestKind,
        verbs: ['get', 'list', 'watch'],
      },
      {
        name: `${PackageManifestResource}/icon`,
        singularName: '',
        namespaced: true,
        kind: PackageManifestKind,
        verbs: ['get'],
      },
    ],
  };
}

function groupVersion() {
  return { groupVersion: PackagesApiVersion, version: PackagesVersion };
}

/** `/apis/packages.operators.coreos.com`. */
export function apiGroup(): Record<string, unknown> {
  return {
    kind: 'APIGroup',
    apiVersion: 'v1',
    name: PackagesGroup,
    versions: [groupVersion()],
    preferredVersion: groupVersion(),
  };
}

/** `/apis`: only this server's group (the aggregator merges it with everyone else's). */
export function apiGroupList(): Record<string, unknown> {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [apiGroup()] };
}

export interface TableOptions {
  /** `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`, as the client asked. */
  apiVersion: string;
  /** `None`, `Metadata` (the default) or `Object`: what each row carries of its object. */
  includeObject: 'None' | 'Metadata' | 'Object';
  now: number;
  /** Leave out the column definitions (every watch event after the first). */
  noHeaders?: boolean;
}

const columns = [
  { name: 'Name', type: 'string', format: 'name', description: 'The package name.', priority: 0 },
  {
    name: 'Catalog',
    type: 'string',
    format: '',
    description: 'The catalog the package is from.',
    priority: 0,
  },
  {
    name: 'Age',
    type: 'string',
    format: '',
    description: 'How long ago the catalog was created.',
    priority: 0,
  },
];

export function table(
  items: readonly PackageManifest[],
  opts: TableOptions,
  resourceVersion?: string,
): Record<string, unknown> {
  return {
    kind: 'Table',
    apiVersion: opts.apiVersion,
    metadata: resourceVersion ? { resourceVersion } : {},
    ...(opts.noHeaders ? {} : { columnDefinitions: columns }),
    rows: items.map((pm) => ({
      cells: [
        pm.metadata.name,
        pm.status.catalogSourceDisplayName,
        age(pm.metadata.creationTimestamp, opts.now),
      ],
      ...(opts.includeObject === 'None'
        ? {}
        : {
            object:
              opts.includeObject === 'Object'
                ? pm
                : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: pm.metadata },
          }),
    })),
  };
}

function age(timestamp: string | undefined, now: number): string {
  const t = timestamp ? Date.parse(timestamp) : NaN;
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

/** A duration as kubectl prints ages (apimachinery `duration.HumanDuration`). */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}
