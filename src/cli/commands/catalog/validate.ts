import { validateCatalog } from '../../../catalog/validate.js';
import { UsageError } from '../../../util/errors.js';
import type { Command } from '../../command.js';
import { detectInput, InputKind, renderInput } from './inputs.js';
import {
  argPath,
  countSummary,
  displayPath,
  emitReport,
  outputMode,
  outputOption,
  plural,
} from './report.js';

export const validateCommand: Command = {
  name: 'validate',
  summary: 'Check a catalog with the rules opm validate applies',
  usage: '<catalog-dir|file>',
  description:
    'Loads a file-based catalog (every YAML/JSON file below the directory, honouring .indexignore) and\n' +
    'checks packages, channels, bundles and deprecations, reporting every problem with its file,\n' +
    'object and field. Exits 0 only when there are no errors.',
  args: { min: 1, max: 1 },
  options: { ...outputOption },
  run: async ({ values, positionals, ctx }) => {
    const mode = outputMode(values);
    const path = argPath(ctx, positionals[0]!);
    const kind = await detectInput(path);
    if (kind !== InputKind.CatalogDir && kind !== InputKind.CatalogFile && typeof kind === 'string') {
      throw new UsageError(
        `${positionals[0]} is a ${kind}, not a catalog; ${kind.startsWith('bundle') ? 'use `bosun bundle validate`' : 'render or import it first'}`,
      );
    }
    const r = await renderInput(path, {}, typeof kind === 'string' ? kind : undefined);
    const v = r.errors.length ? { errors: [], warnings: [] } : validateCatalog(r.config);
    const errors = [...r.errors, ...v.errors];
    const warnings = [...r.warnings, ...v.warnings];
    const report = {
      ok: errors.length === 0,
      packages: r.config.packages.length,
      bundles: r.config.bundles.length,
      errors,
      warnings,
    };
    const what = `${displayPath(ctx, path)}: ${plural(report.packages, 'package')}, ${plural(report.bundles, 'bundle')}`;
    return emitReport(
      ctx,
      mode,
      report,
      `${report.ok ? 'valid' : 'invalid'} catalog ${what}${countSummary(report)}`,
    );
  },
};
