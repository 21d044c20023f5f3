/**
 * What an image is to OLM, told by its labels as opm tells it (operator-registry
 * alpha/action/render.go, `imageToDeclcfg`): a sqlite catalog when it has the database label,
 * else a file-based catalog when it has the configs label (the folder its value names holds the
 * FBC), else a registry+v1 bundle when it has the package label (its content is `manifests/` and
 * `metadata/` at the image root, whatever the other labels say: opm's bundle parser and OLM's
 * unpacker read those two folders), else nothing OLM can read. The labels come from the image
 * config's `config.Labels`.
 */
import { BundleAnnotation } from '../apis/bundle.js';
import { escapeControls } from '../util/terminal.js';

export const CatalogImageLabel = {
  /** The folder of a file-based catalog image's FBC: `/configs` as opm's generated Dockerfile sets it. */
  Configs: 'operators.operatorframework.io.index.configs.v1',
  /** The sqlite database of a catalog image of the old format. */
  Database: 'operators.operatorframework.io.index.database.v1',
} as const;

/** Where opm's generated catalog Dockerfile puts the FBC (`ADD catalog /configs`). */
export const DefaultConfigsDir = '/configs';

export const ImageKind = {
  Catalog: 'file-based catalog',
  SqliteCatalog: 'sqlite catalog',
  Bundle: 'registry+v1 bundle',
  Unknown: 'unknown',
} as const;
export type ImageKind = (typeof ImageKind)[keyof typeof ImageKind];

/** The kind of image `labels` make, in opm's order of precedence. */
export function imageKindOf(labels: Readonly<Record<string, string>>): ImageKind {
  if (CatalogImageLabel.Database in labels) return ImageKind.SqliteCatalog;
  if (CatalogImageLabel.Configs in labels) return ImageKind.Catalog;
  if (BundleAnnotation.Package in labels) return ImageKind.Bundle;
  return ImageKind.Unknown;
}

/** The label that makes an image of `kind`, for messages. */
export const labelOf: Record<Exclude<ImageKind, 'unknown'>, string> = {
  [ImageKind.Catalog]: CatalogImageLabel.Configs,
  [ImageKind.SqliteCatalog]: CatalogImageLabel.Database,
  [ImageKind.Bundle]: BundleAnnotation.Package,
};

/**
 * Why an image whose labels make it another kind is not the `wanted` kind, naming the label that
 * decided and, for an image of no kind, the labels it has.
 */
export function wrongKind(
  wanted: Exclude<ImageKind, 'unknown'>,
  labels: Readonly<Record<string, string>>,
): string {
  const found = imageKindOf(labels);
  const want = labelOf[wanted];
  if (found !== ImageKind.Unknown) {
    const label = labelOf[found];
    return `is a ${found} image (label ${label}=${labelText(labels[label] ?? '')}), not a ${wanted} image (label ${want})`;
  }
  return `is not a ${wanted} image: its config has no label ${want} (${describeLabels(labels)})`;
}

/** Why an image is none of the kinds OLM reads, as opm's "image type could not be determined". */
export function noKind(labels: Readonly<Record<string, string>>): string {
  return `is neither a ${ImageKind.Catalog} image (label ${CatalogImageLabel.Configs}) nor a ${ImageKind.Bundle} image (label ${BundleAnnotation.Package}): ${describeLabels(labels)}`;
}

/**
 * A label's name or value as a message shows it: the image author's text, so cut to `max`
 * characters and with every control character escaped, line breaks too, so that a label cannot
 * act on a terminal or start a line of its own that reads as Bosun's.
 */
export function labelText(text: string, max = 100): string {
  return escapeControls(text.length > max ? `${text.slice(0, max)}...` : text);
}

/** The labels an image has, at most ten, each cut to 100 characters: a label is the image author's text. */
function describeLabels(labels: Readonly<Record<string, string>>): string {
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return 'it has no labels';
  const shown = keys.slice(0, 10).map((k) => `${labelText(k)}=${labelText(labels[k]!)}`);
  return `its labels are ${shown.join(', ')}${keys.length > shown.length ? ` and ${keys.length - shown.length} more` : ''}`;
}
