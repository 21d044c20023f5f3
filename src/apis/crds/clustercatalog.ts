/**
 * OLM v1's ClusterCatalog CRD, as operator-controller v1.2.0 defines it
 * (config/base/catalogd/crd/bases/olm.operatorframework.io_clustercatalogs.yaml): the same fields,
 * defaults, enums, limits, CEL rules (same expressions, same messages, so a v1 manifest gets v1's
 * answer) and printer columns. Descriptions are Bosun's own.
 */
import type { Condition } from '../meta.js';
import {
  AvailabilityMode,
  type CatalogSource,
  type ClusterCatalog,
  type ClusterCatalogSpec,
  type ClusterCatalogStatus,
  type ClusterCatalogURLs,
  type ImageSource,
  type ResolvedCatalogSource,
  type ResolvedImageSource,
  SourceType,
  V1Resources,
} from '../olmv1.js';
import { condition } from './common.js';
import { type CrdDefinition, resourceSchema } from './definition.js';
import { array, integer, object, oneOf, required, string, time, type ValidationRule } from './schema.js';

/**
 * v1's checks of an image reference, in its order. The reference is refused by the first rules
 * that fail; all failing messages are reported together.
 */
const domainRule: ValidationRule = {
  message:
    'must start with a valid domain. valid domains must be alphanumeric characters (lowercase and uppercase) separated by the "." character.',
  rule: "self.matches('^([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])((\\\\.([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))+)?(:[0-9]+)?\\\\b')",
};
const nameRule: ValidationRule = {
  message:
    'a valid name is required. valid names must contain lowercase alphanumeric characters separated only by the ".", "_", "__", "-" characters.',
  rule: 'self.find(\'(\\\\/[a-z0-9]+((([._]|__|[-]*)[a-z0-9]+)+)?((\\\\/[a-z0-9]+((([._]|__|[-]*)[a-z0-9]+)+)?)+)?)\') != ""',
};
const digestAlgorithmRule: ValidationRule = {
  message:
    'digest algorithm is not valid. valid algorithms must start with an uppercase or lowercase alpha character followed by alphanumeric characters and may contain the "-", "_", "+", and "." characters.',
  rule: "self.find('(@.*:)') != \"\" ? self.find('(@.*:)').matches('(@[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*[:])') : true",
};
const digestLengthRule: ValidationRule = {
  message: 'digest is not valid. the encoded string must be at least 32 characters',
  rule: "self.find('(@.*:)') != \"\" ? self.find(':.*$').substring(1).size() >= 32 : true",
};
const digestHexRule: ValidationRule = {
  message: 'digest is not valid. the encoded string must only contain hex characters (A-F, a-f, 0-9)',
  rule: "self.find('(@.*:)') != \"\" ? self.find(':.*$').matches(':[0-9A-Fa-f]*$') : true",
};

/** What a user may name: a tag or a digest. */
const refRules: ValidationRule[] = [
  domainRule,
  nameRule,
  {
    message: 'must end with a digest or a tag',
    rule: 'self.find(\'(@.*:)\') != "" || self.find(\':.*$\') != ""',
  },
  {
    message: 'tag is invalid. the tag must not be more than 127 characters',
    rule: "self.find('(@.*:)') == \"\" ? (self.find(':.*$') != \"\" ? self.find(':.*$').substring(1).size() <= 127 : true) : true",
  },
  {
    message:
      'tag is invalid. valid tags must begin with a word character (alphanumeric + "_") followed by word characters or ".", and "-" characters',
    rule: "self.find('(@.*:)') == \"\" ? (self.find(':.*$') != \"\" ? self.find(':.*$').matches(':[\\\\w][\\\\w.-]*$') : true) : true",
  },
  digestAlgorithmRule,
  digestLengthRule,
  digestHexRule,
];

/** What the status reports: always a digest. */
const resolvedRefRules: ValidationRule[] = [
  domainRule,
  nameRule,
  { message: 'must end with a digest', rule: 'self.find(\'(@.*:)\') != ""' },
  digestAlgorithmRule,
  digestLengthRule,
  digestHexRule,
];

const imageUnionRule: ValidationRule = {
  message: 'image is required when source type is Image, and forbidden otherwise',
  rule: "has(self.type) && self.type == 'Image' ? has(self.image) : !has(self.image)",
};

const sourceType = () =>
  oneOf(Object.values(SourceType), { description: 'Which kind of source; names the member that is set.' });

const spec = object<ClusterCatalogSpec>(
  {
    source: required(
      object<CatalogSource>(
        {
          type: required(sourceType()),
          image: object<ImageSource>(
            {
              ref: required(
                string({
                  description: 'The catalog image, by tag or by digest.',
                  maxLength: 1000,
                  rules: refRules,
                }),
              ),
              pollIntervalMinutes: integer({
                description: 'Minutes between checks for a new digest behind the tag.',
                minimum: 1,
              }),
            },
            {
              description: 'A catalog image.',
              rules: [
                {
                  message: 'cannot specify pollIntervalMinutes while using digest-based image',
                  rule: 'self.ref.find(\'(@.*:)\') != "" ? !has(self.pollIntervalMinutes) : true',
                },
              ],
            },
          ),
        },
        { description: 'Where the catalog content comes from.', rules: [imageUnionRule] },
      ),
    ),
    priority: integer({
      description:
        'Orders catalogs that offer the same bundle; the higher wins. Negative values rank below the default.',
      format: 'int32',
      default: 0,
    }),
    availabilityMode: oneOf([AvailabilityMode.Unavailable, AvailabilityMode.Available], {
      description: 'Available serves the content; Unavailable withdraws it while keeping the object.',
      default: AvailabilityMode.Available,
    }),
  },
  { description: 'The catalog wanted.' },
);

const status = object<ClusterCatalogStatus>(
  {
    conditions: array<Condition>(condition(), {
      listType: 'map',
      mapKeys: ['type'],
      description: 'Serving and Progressing, with their reasons.',
    }),
    resolvedSource: object<ResolvedCatalogSource>(
      {
        type: required(sourceType()),
        image: required(
          object<ResolvedImageSource>(
            {
              ref: required(
                string({
                  description: 'The digest reference the served content was read from.',
                  maxLength: 1000,
                  rules: resolvedRefRules,
                }),
              ),
            },
            { description: 'The image, resolved to a digest.' },
          ),
        ),
      },
      { description: 'The source as last read.', rules: [imageUnionRule] },
    ),
    urls: object<ClusterCatalogURLs>(
      {
        base: required(
          string({
            description: 'The root of the catalog’s HTTP API.',
            maxLength: 525,
            rules: [
              { message: 'must be a valid URL', rule: 'isURL(self)' },
              {
                message: 'scheme must be either http or https',
                rule: 'isURL(self) ? (url(self).getScheme() == "http" || url(self).getScheme() == "https") : true',
              },
            ],
          }),
        ),
      },
      { description: 'Where the catalog is served.' },
    ),
    lastUnpacked: time({ description: 'When the served content last changed.' }),
  },
  { description: 'What the manager observed.', preserveUnknownFields: true },
);

export const clusterCatalogCrd: CrdDefinition = {
  resource: V1Resources.ClusterCatalog,
  singular: 'clustercatalog',
  shortNames: [],
  categories: [],
  printerColumns: [
    { name: 'LastUnpacked', type: 'date', jsonPath: '.status.lastUnpacked' },
    { name: 'Serving', type: 'string', jsonPath: '.status.conditions[?(@.type=="Serving")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  schema: resourceSchema<ClusterCatalog>(
    'A catalog of operator bundles, read from an image, that ClusterExtensions install from (OLM v1).',
    { spec: required(spec), status },
  ).json,
};
