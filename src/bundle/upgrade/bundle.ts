/**
 * A bundle whose manifests of removed API versions are converted (index.ts), for `bosun catalog
 * import` and `publish` with `--convert-removed-apis`: the catalog then carries what current
 * clusters serve, instead of what the bundle was published with. Pure; the bundle is not changed.
 */
import type { Bundle } from '../../apis/bundle.js';
import type { Problem } from '../../util/result.js';
import { describe } from '../manifest.js';
import { labelOf } from '../render.js';
import { upgradeManifest } from './index.js';

export interface UpgradedBundle {
  /** The bundle with converted manifests (the same bundle when nothing was converted). */
  bundle: Bundle;
  /** One per conversion, and one per change of meaning, each naming the file, object and field. */
  warnings: Problem[];
  /** Manifests that cannot be converted without a decision of the author's. */
  errors: Problem[];
}

export function upgradeBundle(bundle: Bundle): UpgradedBundle {
  const warnings: Problem[] = [];
  const errors: Problem[] = [];
  let changed = false;
  const manifests = bundle.manifests.map((m) => {
    const r = upgradeManifest(m.object, { file: labelOf(bundle, m.file), object: describe(m.object) });
    if (!r.ok) {
      errors.push(...r.errors);
      return m;
    }
    if (r.value.from === undefined) return m;
    changed = true;
    warnings.push(...r.value.warnings);
    return { ...m, object: r.value.object };
  });
  return { bundle: changed ? { ...bundle, manifests } : bundle, warnings, errors };
}
