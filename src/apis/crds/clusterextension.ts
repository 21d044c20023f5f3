/**
 * OLM v1's ClusterExtension CRD, as operator-controller v1.2.0 defines it
 * (config/base/operator-controller/crd/bases/olm.operatorframework.io_clusterextensions.yaml): the
 * same fields, defaults, enums, limits, CEL rules (same expressions, same messages, so a v1
 * manifest gets v1's answer) and printer columns. Descriptions are Bosun's own.
 *
 * Two fields come from v1's later API, where they sit behind experimental gates: `config` (a
 * bundle's configuration, `watchNamespace` for a registry+v1 bundle) and `progressDeadlineMinutes`,
 * with the same limits and union rule; Bosun serves them without a gate.
 */
import type { Condition } from '../meta.js';
import {
  type BundleMetadata,
  type CatalogFilter,
  type ClusterExtension,
  type ClusterExtensionConfig,
  type ClusterExtensionInstallConfig,
  type ClusterExtensionInstallStatus,
  type ClusterExtensionSpec,
  type ClusterExtensionStatus,
  CRDUpgradeSafetyEnforcement,
  type CRDUpgradeSafetyPreflightConfig,
  ExtensionConfigType,
  ExtensionSourceType,
  type PreflightConfig,
  type ServiceAccountReference,
  type SourceConfig,
  UpgradeConstraintPolicy,
  V1Resources,
} from '../olmv1.js';
import { condition, labelSelector } from './common.js';
import { type CrdDefinition, resourceSchema } from './definition.js';
import { array, freeform, integer, object, oneOf, required, string, type ValidationRule } from './schema.js';

/** A field that may be set on create and never changed after. */
const immutable = (field: string): ValidationRule => ({
  message: `${field} is immutable`,
  rule: 'self == oldSelf',
});

const dns1123Subdomain =
  'self.matches("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")';
const dns1123SubdomainMessage = (field: string) =>
  `${field} must be a valid DNS1123 subdomain. It must contain only lowercase alphanumeric characters, hyphens (-) or periods (.), start and end with an alphanumeric character, and be no longer than 253 characters`;

/**
 * v1's version-range check, character for character (including its quirks, such as `]` accepted
 * after a wildcard in some positions): a range v1 refuses must be refused here too.
 */
const versionRangeRule =
  'self.matches("^(\\\\s*(=||!=|>|<|>=|=>|<=|=<|~|~>|\\\\^)\\\\s*(v?(0|[1-9]\\\\d*|[x|X|\\\\*])(\\\\.(0|[1-9]\\\\d*|x|X|\\\\*]))?(\\\\.(0|[1-9]\\\\d*|x|X|\\\\*))?(-([0-9A-Za-z\\\\-]+(\\\\.[0-9A-Za-z\\\\-]+)*))?(\\\\+([0-9A-Za-z\\\\-]+(\\\\.[0-9A-Za-z\\\\-]+)*))?)\\\\s*)((?:\\\\s+|,\\\\s*|\\\\s*\\\\|\\\\|\\\\s*)(=||!=|>|<|>=|=>|<=|=<|~|~>|\\\\^)\\\\s*(v?(0|[1-9]\\\\d*|x|X|\\\\*])(\\\\.(0|[1-9]\\\\d*|x|X|\\\\*))?(\\\\.(0|[1-9]\\\\d*|x|X|\\\\*]))?(-([0-9A-Za-z\\\\-]+(\\\\.[0-9A-Za-z\\\\-]+)*))?(\\\\+([0-9A-Za-z\\\\-]+(\\\\.[0-9A-Za-z\\\\-]+)*))?)\\\\s*)*$")';

const catalog = object<CatalogFilter>(
  {
    packageName: required(
      string({
        description: 'The package to install; immutable.',
        maxLength: 253,
        rules: [
          immutable('packageName'),
          { message: dns1123SubdomainMessage('packageName'), rule: dns1123Subdomain },
        ],
      }),
    ),
    version: string({
      description:
        'The versions allowed, as a range (`1.2.x`, `>=1.0.0, <2.0.0`, `~1.2 || ^2`); any when unset.',
      maxLength: 64,
      rules: [{ message: 'invalid version expression', rule: versionRangeRule }],
    }),
    channels: array(
      string({
        maxLength: 253,
        rules: [{ message: 'channels entries must be valid DNS1123 subdomains', rule: dns1123Subdomain }],
      }),
      { description: 'Only bundles in these channels; every channel when unset.', maxItems: 256 },
    ),
    selector: labelSelector({
      description: 'Only ClusterCatalogs with these labels; every catalog when unset.',
    }),
    upgradeConstraintPolicy: oneOf(Object.values(UpgradeConstraintPolicy), {
      description:
        'CatalogProvided: upgrade along the catalog’s edges. SelfCertified: any version, downgrades too.',
      default: UpgradeConstraintPolicy.CatalogProvided,
    }),
  },
  { description: 'Which bundle of which package, from the ClusterCatalogs.' },
);

const spec = object<ClusterExtensionSpec>(
  {
    namespace: required(
      string({
        description: 'The namespace for the extension’s namespaced objects; immutable.',
        maxLength: 63,
        rules: [
          immutable('namespace'),
          {
            message: 'namespace must be a valid DNS1123 label',
            rule: 'self.matches("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")',
          },
        ],
      }),
    ),
    serviceAccount: required(
      object<ServiceAccountReference>(
        {
          name: required(
            string({
              description: 'A ServiceAccount in spec.namespace; immutable.',
              maxLength: 253,
              rules: [
                immutable('name'),
                { message: dns1123SubdomainMessage('name'), rule: dns1123Subdomain },
              ],
            }),
          ),
        },
        { description: 'The ServiceAccount the install acts as.' },
      ),
    ),
    source: required(
      object<SourceConfig>(
        {
          sourceType: required(
            oneOf(Object.values(ExtensionSourceType), {
              description: 'Which kind of source; names the member that is set.',
            }),
          ),
          catalog,
        },
        {
          description: 'Where the bundle comes from.',
          rules: [
            {
              message: 'catalog is required when sourceType is Catalog, and forbidden otherwise',
              rule: "has(self.sourceType) && self.sourceType == 'Catalog' ? has(self.catalog) : !has(self.catalog)",
            },
          ],
        },
      ),
    ),
    install: object<ClusterExtensionInstallConfig>(
      {
        preflight: object<PreflightConfig>(
          {
            crdUpgradeSafety: required(
              object<CRDUpgradeSafetyPreflightConfig>(
                {
                  enforcement: required(
                    oneOf(Object.values(CRDUpgradeSafetyEnforcement), {
                      description: 'Strict refuses an unsafe CRD upgrade; None skips the check.',
                    }),
                  ),
                },
                { description: 'The CRD upgrade safety check.' },
              ),
            ),
          },
          {
            description: 'Checks run before an install or upgrade.',
            rules: [
              {
                message: 'at least one of [crdUpgradeSafety] are required when preflight is specified',
                rule: 'has(self.crdUpgradeSafety)',
              },
            ],
          },
        ),
      },
      {
        description: 'How to install.',
        rules: [
          {
            message: 'at least one of [preflight] are required when install is specified',
            rule: 'has(self.preflight)',
          },
        ],
      },
    ),
    config: object<ClusterExtensionConfig>(
      {
        configType: required(
          oneOf(Object.values(ExtensionConfigType), {
            description: 'Which kind of configuration; names the member that is set.',
          }),
        ),
        inline: freeform({
          description:
            'The bundle’s configuration, checked against what the bundle allows (for a registry+v1 bundle: watchNamespace).',
          minProperties: 1,
        }),
      },
      {
        description: 'Configuration of the bundle.',
        rules: [
          {
            message: 'inline is required when configType is Inline, and forbidden otherwise',
            rule: "has(self.configType) && self.configType == 'Inline' ?has(self.inline) : !has(self.inline)",
          },
        ],
      },
    ),
    progressDeadlineMinutes: integer({
      description:
        'Minutes an install or upgrade may take before it counts as failed; a failed upgrade is rolled back. Unset: no deadline.',
      format: 'int32',
      minimum: 10,
      maximum: 720,
    }),
  },
  { description: 'The extension wanted.' },
);

const status = object<ClusterExtensionStatus>(
  {
    conditions: array<Condition>(condition(), {
      listType: 'map',
      mapKeys: ['type'],
      description: 'Installed, Progressing and the deprecation conditions, with their reasons.',
    }),
    install: object<ClusterExtensionInstallStatus>(
      {
        bundle: required(
          object<BundleMetadata>(
            {
              name: required(
                string({
                  description: 'The installed bundle.',
                  // v1 names the wrong field in this message; kept, so both answer alike.
                  rules: [{ message: dns1123SubdomainMessage('packageName'), rule: dns1123Subdomain }],
                }),
              ),
              version: required(
                string({
                  description: 'The installed bundle’s version.',
                  rules: [
                    {
                      message: 'version must be well-formed semver',
                      rule: 'self.matches("^([0-9]+)(\\\\.[0-9]+)?(\\\\.[0-9]+)?(-([-0-9A-Za-z]+(\\\\.[-0-9A-Za-z]+)*))?(\\\\+([-0-9A-Za-z]+(-\\\\.[-0-9A-Za-z]+)*))?")',
                    },
                  ],
                }),
              ),
            },
            { description: 'The bundle installed.' },
          ),
        ),
      },
      { description: 'What is installed.' },
    ),
  },
  { description: 'What the manager observed.', preserveUnknownFields: true },
);

export const clusterExtensionCrd: CrdDefinition = {
  resource: V1Resources.ClusterExtension,
  singular: 'clusterextension',
  shortNames: [],
  categories: [],
  printerColumns: [
    { name: 'Installed Bundle', type: 'string', jsonPath: '.status.install.bundle.name' },
    { name: 'Version', type: 'string', jsonPath: '.status.install.bundle.version' },
    { name: 'Installed', type: 'string', jsonPath: ".status.conditions[?(@.type=='Installed')].status" },
    { name: 'Progressing', type: 'string', jsonPath: ".status.conditions[?(@.type=='Progressing')].status" },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  schema: resourceSchema<ClusterExtension>(
    'An operator installed cluster-wide from a ClusterCatalog (OLM v1).',
    { spec, status },
    { metadataRequired: false },
  ).json,
};
