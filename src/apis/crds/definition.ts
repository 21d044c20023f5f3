/** What Bosun needs to know to write one CustomResourceDefinition. */
import type { ResourceType } from '../meta.js';
import { type JSONSchemaProps, type Props, type Schema, string } from './schema.js';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  /** A simple JSONPath into the object, e.g. `.spec.displayName` or `.spec.names[0]`. */
  jsonPath: string;
  description?: string;
}

export interface CrdDefinition {
  resource: ResourceType;
  singular: string;
  shortNames: string[];
  categories: string[];
  printerColumns: PrinterColumn[];
  /** The whole object's schema (see `resourceSchema`) in the stored version, `resource.version`. */
  schema: JSONSchemaProps;
  /**
   * Older versions that are still served, as OLM serves them, so manifests written for them
   * keep working. Objects are stored in `resource.version` unchanged but for `apiVersion` (no
   * conversion webhook), so an older schema must be a subset of the stored one.
   */
  olderVersions?: { name: string; schema: JSONSchemaProps }[];
}

/**
 * The top-level schema of a custom resource: apiVersion, kind and metadata as every CRD has
 * them, plus `spec` and `status` described against the kind's TypeScript type.
 */
export function resourceSchema<T extends { spec?: unknown; status?: unknown }>(
  description: string,
  parts: Props<Pick<T, 'spec' | 'status'>>,
  /**
   * Whether the schema lists `metadata` as required. Every kind of OLM v0 does; OLM v1's
   * ClusterExtension does not (the API server demands a name either way).
   */
  opts: { metadataRequired?: boolean } = {},
): Schema<T> {
  const partEntries = Object.entries(
    parts as Record<string, { json: JSONSchemaProps; isRequired?: boolean }>,
  );
  const requiredParts = partEntries.filter(([, s]) => s.isRequired === true).map(([name]) => name);
  const requiredNames = [...(opts.metadataRequired === false ? [] : ['metadata']), ...requiredParts].sort();
  const json: JSONSchemaProps = {
    description,
    type: 'object',
    ...(requiredNames.length > 0 ? { required: requiredNames } : {}),
    properties: {
      apiVersion: string().json,
      kind: string().json,
      metadata: { type: 'object' },
      ...Object.fromEntries(partEntries.map(([name, s]) => [name, s.json])),
    },
  };
  return { json };
}
