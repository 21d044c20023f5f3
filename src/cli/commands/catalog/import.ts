import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type DeclarativeConfig, emptyConfig } from '../../../apis/fbc.js';
import { isPackageManifestDir } from '../../../bundle/package-manifest.js';
import { CatalogFormat } from '../../../catalog/encode.js';
import { type ImportResult, importOperatorsDir, importPackageDir } from '../../../catalog/import.js';
import { loadCatalog } from '../../../catalog/load.js';
import { objectName } from '../../../catalog/validate.js';
import { filesOfPackages, writeCatalog } from '../../../catalog/write.js';
import type { Problem } from '../../../util/result.js';
import { bool, type Command } from '../../command.js';
import {
  argPath,
  countSummary,
  displayPath,
  emitReport,
  outputMode,
  outputOption,
  plural,
  progressLine,
} from './report.js';
import { importWorkers, parseFormat } from './shared.js';

export const importCommand: Command = {
  name: 'import',
  summary: 'Import package-manifest and bundle-layout packages into a catalog',
  usage: '<packages-dir> <catalog-dir>',
  description:
    'Imports one package directory, or a directory of them (like community-operators), into the catalog\n' +
    'as <catalog-dir>/<package>/catalog.yaml. Both layouts are read: <pkg>.package.yaml with version\n' +
    'folders, and <version>/manifests + <version>/metadata. Every problem is reported with its file;\n' +
    'nothing is written when there is any error, unless --skip-invalid leaves the packages that have\n' +
    'errors out. A package already in the catalog is refused unless --replace.\n' +
    '\n' +
    'With --convert-removed-apis, manifests of API versions Kubernetes no longer serves are converted\n' +
    'to their successors before they are written: apiextensions.k8s.io/v1beta1 CRDs to v1 (schemas made\n' +
    'structural; what validation that loses is a warning), rbac.authorization.k8s.io/v1beta1 to v1, and\n' +
    'the like. Bosun converts them at install time anyway; converting on import makes the catalog\n' +
    'installable by other tools too. Without it, what is written is what opm writes for the same input.',
  args: { min: 2, max: 2 },
  options: {
    format: { type: 'string', valueName: 'FORMAT', description: 'yaml (default) or json files' },
    'skip-invalid': {
      type: 'boolean',
      description: 'Leave out packages with errors (reported as warnings) and write the rest',
    },
    replace: { type: 'boolean', description: 'Replace packages the catalog already has' },
    'validate-bundles': {
      type: 'boolean',
      description: 'Also run bundle validation on every bundle (findings are warnings)',
    },
    'convert-removed-apis': {
      type: 'boolean',
      description: 'Convert manifests of removed API versions (v1beta1 CRDs, ...) to served ones',
    },
    ...outputOption,
  },
  run: async ({ values, positionals, ctx }) => {
    const mode = outputMode(values);
    const format = parseFormat(values, 'format') ?? CatalogFormat.YAML;
    const source = argPath(ctx, positionals[0]!);
    const root = argPath(ctx, positionals[1]!);
    const progress = progressLine(ctx, 'importing packages');
    const imported = await importSource(source, {
      validateBundles: bool(values, 'validate-bundles'),
      convertRemovedApis: bool(values, 'convert-removed-apis'),
      onProgress: progress,
    });
    progress.end();

    const errors: Problem[] = [];
    const warnings: Problem[] = [...imported.warnings];
    let config = imported.config;
    if (bool(values, 'skip-invalid')) {
      const bad = new Set(imported.results.filter((r) => r.errors.length).map((r) => r.name ?? r.dir));
      for (const r of imported.results) {
        if (!r.errors.length) continue;
        warnings.push(...r.errors, {
          file: r.dir,
          ...(r.name ? { object: objectName.package(r.name) } : {}),
          message: 'left out of the catalog because of the problems above',
        });
      }
      config = withoutPackages(config, bad);
    } else errors.push(...imported.errors);

    const existing = await loadExisting(root, errors);
    const names = new Set(config.packages.map((p) => p.name));
    const clashing = existing.packages.filter((p) => names.has(p.name)).map((p) => p.name);
    if (clashing.length && !bool(values, 'replace')) {
      for (const name of clashing)
        errors.push({
          file: root,
          object: objectName.package(name),
          message: `the catalog already has package ${name}; pass --replace to replace it`,
        });
    }
    const { files: oldFiles, problems } = filesOfPackages(root, existing, new Set(clashing));
    errors.push(...problems);

    const report = {
      ok: errors.length === 0,
      packages: config.packages.length,
      bundles: config.bundles.length,
      errors,
      warnings,
      written: [] as string[],
    };
    if (report.ok) {
      const written = await writeCatalog(root, config, { format, remove: oldFiles });
      if (written.ok) report.written = written.value;
      else {
        errors.push(...written.errors);
        report.ok = false;
      }
    }
    const summary = report.ok
      ? `imported ${plural(report.packages, 'package')} and ${plural(report.bundles, 'bundle')} into ${displayPath(ctx, root)}${countSummary(report)}`
      : `nothing was written: ${plural(errors.length, 'error')} importing ${displayPath(ctx, source)}`;
    return emitReport(ctx, mode, report, summary);
  },
};

/** A single package directory, or a directory of packages. */
async function importSource(
  source: string,
  opts: { validateBundles: boolean; convertRemovedApis: boolean; onProgress: (d: number, t: number) => void },
): Promise<ImportResult> {
  if (!(await stat(source).catch(() => undefined))?.isDirectory()) {
    return {
      config: emptyConfig(),
      errors: [{ file: source, message: 'not a directory' }],
      warnings: [],
      packages: 0,
      bundles: 0,
      results: [],
    };
  }
  if (await isSinglePackage(source)) {
    const { cfg, result } = await importPackageDir(source, opts);
    return {
      config: cfg,
      errors: result.errors,
      warnings: result.warnings,
      packages: cfg.packages.length,
      bundles: cfg.bundles.length,
      results: [result],
    };
  }
  return importOperatorsDir(source, { ...opts, workers: importWorkers() });
}

async function isSinglePackage(dir: string): Promise<boolean> {
  if (await isPackageManifestDir(dir)) return true;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (
      e.isDirectory() &&
      (await readdir(join(dir, e.name)).catch(() => [] as string[])).includes('manifests')
    )
      return true;
  }
  return false;
}

async function loadExisting(root: string, errors: Problem[]): Promise<DeclarativeConfig> {
  if (!(await stat(root).catch(() => undefined))) return emptyConfig();
  const loaded = await loadCatalog(root);
  if (!loaded.ok) {
    errors.push(...loaded.errors);
    return emptyConfig();
  }
  return loaded.value;
}

function withoutPackages(cfg: DeclarativeConfig, names: Set<string>): DeclarativeConfig {
  return {
    packages: cfg.packages.filter((p) => !names.has(p.name)),
    channels: cfg.channels.filter((c) => !names.has(c.package)),
    bundles: cfg.bundles.filter((b) => !names.has(b.package)),
    deprecations: cfg.deprecations.filter((d) => !names.has(d.package)),
    others: cfg.others.filter((o) => typeof o.package !== 'string' || !names.has(o.package)),
  };
}
