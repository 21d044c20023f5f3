/**
 * The PackageManifest API's OpenAPI documents, which the aggregator collects so that
 * `kubectl explain packagemanifest` works: `/openapi/v2` (Swagger 2.0, merged into the API
 * server's) and `/openapi/v3` (an index naming one document per group version, fetched by
 * `serverRelativeURL`). Both are built from one set of schemas, which differ only in where a
 * `$ref` points.
 */
import { createHash } from 'node:crypto';
import { PackageManifestKind, PackagesGroup, PackagesVersion } from '../../apis/packages.js';

type Schema = Record<string, unknown>;
const NS = 'io.operatorframework.packages.v1';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

function schemas(ref: (name: string) => Schema): Record<string, Schema> {
  const str = (description: string): Schema => ({ type: 'string', description });
  const strings = (description: string): Schema => ({
    type: 'array',
    items: { type: 'string' },
    description,
  });
  const obj = (description: string, properties: Record<string, Schema>, required?: string[]): Schema => ({
    type: 'object',
    description,
    properties,
    ...(required ? { required } : {}),
  });
  const list = (description: string, of: string): Schema => ({ type: 'array', description, items: ref(of) });
  const deprecation = { ...ref(`${NS}.Deprecation`), description: 'Set when the catalog deprecates it.' };
  const apiDescriptions = (what: string): Schema =>
    obj(`The ${what} the operator owns and requires.`, {
      owned: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      required: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
    });
  return {
    [`${NS}.PackageManifest`]: {
      ...obj(
        'A package of a catalog: its channels, their newest versions and what those install. Read-only; made from the catalogs of CatalogSources.',
        {
          apiVersion: str('The versioned schema of this object: packages.operators.coreos.com/v1.'),
          kind: str('PackageManifest.'),
          metadata: ref(`${META}.ObjectMeta`),
          spec: obj('Empty: a PackageManifest has no desired state.', {}),
          status: ref(`${NS}.PackageManifestStatus`),
        },
      ),
      'x-kubernetes-group-version-kind': [
        { group: PackagesGroup, version: PackagesVersion, kind: PackageManifestKind },
      ],
    },
    [`${NS}.PackageManifestList`]: {
      ...obj(
        'A list of PackageManifests.',
        {
          apiVersion: str('packages.operators.coreos.com/v1.'),
          kind: str('PackageManifestList.'),
          metadata: ref(`${META}.ListMeta`),
          items: list('The packages.', `${NS}.PackageManifest`),
        },
        ['items'],
      ),
      'x-kubernetes-group-version-kind': [
        { group: PackagesGroup, version: PackagesVersion, kind: `${PackageManifestKind}List` },
      ],
    },
    [`${NS}.PackageManifestStatus`]: obj(
      'What the catalog holds for the package.',
      {
        catalogSource: str('The name of the CatalogSource the package is from.'),
        catalogSourceDisplayName: str("The CatalogSource's display name."),
        catalogSourcePublisher: str("The CatalogSource's publisher."),
        catalogSourceNamespace: str('The namespace of the CatalogSource.'),
        provider: ref(`${NS}.AppLink`),
        packageName: str('The name of the package, e.g. etcd.'),
        deprecation,
        channels: list('The channels of the package, sorted by name.', `${NS}.PackageChannel`),
        defaultChannel: str('The channel a Subscription that names none follows.'),
      },
      [
        'catalogSource',
        'catalogSourceDisplayName',
        'catalogSourcePublisher',
        'catalogSourceNamespace',
        'packageName',
        'channels',
        'defaultChannel',
      ],
    ),
    [`${NS}.PackageChannel`]: obj(
      'One channel of the package.',
      {
        name: str('The channel name, e.g. stable.'),
        currentCSV: str("The name of the channel's newest bundle (its head)."),
        currentCSVDesc: ref(`${NS}.CSVDescription`),
        deprecation,
        entries: list('Every bundle of the channel, newest version first.', `${NS}.ChannelEntry`),
      },
      ['name', 'currentCSV', 'entries'],
    ),
    [`${NS}.ChannelEntry`]: obj(
      'A bundle of a channel.',
      { name: str('The bundle (CSV) name.'), version: str('The bundle version.'), deprecation },
      ['name'],
    ),
    [`${NS}.CSVDescription`]: obj("What the channel head's ClusterServiceVersion says of the operator.", {
      displayName: str('The name to show.'),
      icon: list('Icons, base64 encoded.', `${NS}.Icon`),
      version: str('The semantic version.'),
      provider: ref(`${NS}.AppLink`),
      annotations: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description: "The CSV's annotations.",
      },
      keywords: strings('Keywords.'),
      links: list('Links.', `${NS}.AppLink`),
      maintainers: list('Maintainers.', `${NS}.Maintainer`),
      maturity: str('Maturity, e.g. alpha or stable.'),
      description: str('The long description, in Markdown.'),
      installModes: {
        type: 'array',
        description: 'Which OperatorGroup target namespace settings the operator supports.',
        items: obj(
          '',
          {
            type: str('OwnNamespace, SingleNamespace, MultiNamespace or AllNamespaces.'),
            supported: { type: 'boolean' },
          },
          ['type', 'supported'],
        ),
      },
      customresourcedefinitions: apiDescriptions('CustomResourceDefinitions'),
      apiservicedefinitions: apiDescriptions('APIServices'),
      nativeApis: {
        type: 'array',
        description: 'Kubernetes APIs the operator needs.',
        items: {
          type: 'object',
          properties: { group: { type: 'string' }, version: { type: 'string' }, kind: { type: 'string' } },
        },
      },
      minKubeVersion: str('The oldest Kubernetes version the operator runs on.'),
      relatedImages: strings('Every image the operator uses.'),
    }),
    [`${NS}.AppLink`]: obj('A named link.', { name: str('The name.'), url: str('The URL.') }),
    [`${NS}.Maintainer`]: obj('A maintainer.', { name: str('The name.'), email: str('The email address.') }),
    [`${NS}.Icon`]: obj('An icon.', {
      base64data: str('The image, base64 encoded.'),
      mediatype: str('Its media type, e.g. image/png.'),
    }),
    [`${NS}.Deprecation`]: obj('A deprecation.', { message: str('What to do instead.') }, ['message']),
    [`${META}.ObjectMeta`]: obj('Standard object metadata.', {
      name: str('The name, unique within the namespace.'),
      namespace: str('The namespace the object is seen from.'),
      labels: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description: 'Labels, for label selectors.',
      },
      annotations: { type: 'object', additionalProperties: { type: 'string' }, description: 'Annotations.' },
      creationTimestamp: {
        type: 'string',
        format: 'date-time',
        description: 'When the catalog was created.',
      },
      resourceVersion: str('The version of the object, for watches.'),
      uid: str('A unique identifier.'),
    }),
    [`${META}.ListMeta`]: obj('Standard list metadata.', {
      resourceVersion: str('The version of the list, to watch from.'),
      continue: str('Unused: lists are never split.'),
    }),
  };
}

const groupVersionPath = `apis/${PackagesGroup}/${PackagesVersion}`;

/**
 * The read operations, each marked with the kind it serves: `kubectl explain` finds a resource's
 * kind through its paths' `x-kubernetes-group-version-kind`.
 */
function paths(response: (schema: Schema) => Schema, ref: (name: string) => Schema): Record<string, Schema> {
  const gvk = { group: PackagesGroup, version: PackagesVersion, kind: PackageManifestKind };
  const op = (action: string, description: string, kind: string): Schema => ({
    get: {
      description,
      operationId: `${action}PackagesOperatorsCoreosComV1PackageManifest`,
      tags: ['packagesOperatorsCoreosCom_v1'],
      responses: { '200': response(ref(`${NS}.${kind}`)), '401': { description: 'Unauthorized' } },
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': gvk,
    },
  });
  const base = `/apis/${PackagesGroup}/${PackagesVersion}`;
  return {
    [`${base}/packagemanifests`]: op(
      'list',
      'List PackageManifests of every namespace.',
      'PackageManifestList',
    ),
    [`${base}/namespaces/{namespace}/packagemanifests`]: op(
      'list',
      'List the PackageManifests a namespace sees.',
      'PackageManifestList',
    ),
    [`${base}/namespaces/{namespace}/packagemanifests/{name}`]: op(
      'get',
      'Read a PackageManifest.',
      'PackageManifest',
    ),
  };
}

export function openAPIv2(): Schema {
  return {
    swagger: '2.0',
    info: { title: 'Bosun PackageManifest API', version: PackagesVersion },
    paths: paths(
      (schema) => ({ description: 'OK', schema }),
      (name) => ({ $ref: `#/definitions/${name}` }),
    ),
    definitions: schemas((name) => ({ $ref: `#/definitions/${name}` })),
  };
}

export function openAPIv3GroupVersion(): Schema {
  return {
    openapi: '3.0.0',
    info: { title: 'Bosun PackageManifest API', version: PackagesVersion },
    paths: paths(
      (schema) => ({ description: 'OK', content: { 'application/json': { schema } } }),
      (name) => ({ $ref: `#/components/schemas/${name}` }),
    ),
    components: { schemas: schemas((name) => ({ allOf: [{ $ref: `#/components/schemas/${name}` }] })) },
  };
}

const v3Body = JSON.stringify(openAPIv3GroupVersion());
const v3Hash = createHash('sha512').update(v3Body).digest('hex').slice(0, 128).toUpperCase();

/** `/openapi/v3`: where the group version's document is. */
export function openAPIv3Index(): Schema {
  return {
    paths: { [groupVersionPath]: { serverRelativeURL: `/openapi/v3/${groupVersionPath}?hash=${v3Hash}` } },
  };
}

/** The OpenAPI document for a path, or undefined when there is none there. */
export function openAPIDocument(path: string): string | undefined {
  if (path === '/openapi/v2') return JSON.stringify(openAPIv2());
  if (path === '/openapi/v3') return JSON.stringify(openAPIv3Index());
  if (path === `/openapi/v3/${groupVersionPath}`) return v3Body;
  return undefined;
}
