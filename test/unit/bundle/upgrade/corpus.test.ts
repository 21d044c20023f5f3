/**
 * The converter on real data: every v1beta1 CRD (and every other removed API) of the OperatorHub
 * 2021 corpus. The API server's verdict on the same CRDs is test/integration/bundle; here, the
 * invariants of each conversion. Skips without BOSUN_CORPUS_DIR.
 */
import { describe, expect, it } from 'vitest';
import { removedApi, upgradeManifest } from '../../../../src/bundle/upgrade/index.js';
import type { JsonObject } from '../../../../src/bundle/upgrade/json.js';
import { repairSchema } from '../../../../src/bundle/upgrade/schema.js';
import { checkV1Schema } from '../../../../src/bundle/upgrade/structural.js';
import { importOperatorsDir } from '../../../../src/catalog/import.js';
import { corpusDir, corpusManifests, corpusSkipMessage, isV1beta1CRD } from './corpus.js';

if (!corpusDir) process.stderr.write(`${corpusSkipMessage}\n`);

const P = 'x-kubernetes-preserve-unknown-fields';

describe.skipIf(!corpusDir)(
  'converting the removed APIs of the OperatorHub 2021 corpus (BOSUN_CORPUS_DIR)',
  () => {
    it('every v1beta1 CRD converts to a v1 CRD with the invariants v1 requires', () => {
      const crds = corpusManifests(corpusDir!, isV1beta1CRD);
      expect(crds.length).toBeGreaterThan(2000);
      const failures: string[] = [];
      let fallbacks = 0;
      let warnings = 0;
      const started = performance.now();
      for (const { where, object } of crds) {
        const fail = (why: string) => failures.push(`${where}: ${why}`);
        const r = upgradeManifest(object, { file: where });
        if (!r.ok) {
          fail(r.errors.map((e) => e.message).join('; '));
          continue;
        }
        const out = r.value.object;
        const inSpec = object.spec as JsonObject;
        const spec = out.spec as JsonObject;
        const versions = spec.versions as JsonObject[];
        if (out.apiVersion !== 'apiextensions.k8s.io/v1') fail(`apiVersion is ${String(out.apiVersion)}`);
        for (const gone of [
          'version',
          'validation',
          'subresources',
          'additionalPrinterColumns',
          'preserveUnknownFields',
        ]) {
          if (gone in spec) fail(`spec.${gone} is still there`);
        }
        if (versions.filter((v) => v.storage === true).length !== 1) fail('not exactly one storage version');
        const names = spec.names as JsonObject;
        if (!names.singular || !names.listKind) fail('names.singular or names.listKind is not set');
        const inVersions = Array.isArray(inSpec.versions)
          ? (inSpec.versions as JsonObject[]).map((v) => v.name)
          : [inSpec.version];
        if (JSON.stringify(versions.map((v) => v.name)) !== JSON.stringify(inVersions))
          fail('versions changed');
        const inColumns = Array.isArray(inSpec.additionalPrinterColumns)
          ? inSpec.additionalPrinterColumns.length
          : undefined;
        versions.forEach((v, i) => {
          const schema = (v.schema as JsonObject | undefined)?.openAPIV3Schema as JsonObject | undefined;
          if (!schema) return fail(`versions[${i}] has no schema`);
          const status = (v.subresources as JsonObject | undefined)?.status !== undefined;
          const violations = checkV1Schema(schema, `versions[${i}]`, { statusSubresource: status });
          if (violations.length)
            fail(`versions[${i}] breaks v1 rules: ${JSON.stringify(violations.slice(0, 2))}`);
          if (inSpec.preserveUnknownFields !== false && schema[P] !== true)
            fail(`versions[${i}] prunes unknown fields`);
          const again = repairSchema(schema, 'x', {
            preserveUnknownFields: inSpec.preserveUnknownFields !== false,
            statusSubresource: status,
          });
          if (again.notes.length || JSON.stringify(again.schema) !== JSON.stringify(schema))
            fail(`versions[${i}] repairs again`);
          const columns = (v.additionalPrinterColumns as JsonObject[] | undefined) ?? [];
          if (columns.some((c) => typeof c.jsonPath !== 'string' || 'JSONPath' in c))
            fail(`versions[${i}] column without jsonPath`);
          if (inColumns !== undefined && columns.length !== inColumns)
            fail(`versions[${i}] lost printer columns`);
        });
        for (const w of r.value.warnings) {
          warnings++;
          if (!w.field || !w.object?.startsWith('CustomResourceDefinition/'))
            fail(`warning without object and field: ${w.message}`);
          if (/cannot be made a structural schema/.test(w.message)) fallbacks++;
        }
      }
      process.stderr.write(
        `[corpus] ${crds.length} v1beta1 CRDs converted in ${(performance.now() - started).toFixed(0)} ms; ${warnings} warnings; ${fallbacks} versions fell back to an unvalidated schema\n`,
      );
      expect(failures).toEqual([]);
      expect(fallbacks).toBe(0);
    });

    it('every other manifest of a removed API converts', () => {
      const others = corpusManifests(
        corpusDir!,
        (apiVersion, kind) =>
          typeof apiVersion === 'string' &&
          typeof kind === 'string' &&
          kind !== 'CustomResourceDefinition' &&
          removedApi(apiVersion, kind) !== undefined,
      );
      expect(others.length).toBeGreaterThan(0);
      for (const { where, object } of others) {
        const r = upgradeManifest(object, { file: where });
        expect(r.ok, where).toBe(true);
        if (r.ok)
          expect(
            removedApi(String(r.value.object.apiVersion), String(r.value.object.kind)),
            where,
          ).toBeUndefined();
      }
    });

    it(
      'importing the corpus with the conversion leaves no removed API in the catalog',
      { timeout: 600_000 },
      async () => {
        const imported = await importOperatorsDir(corpusDir!, { convertRemovedApis: true });
        const conversionErrors = imported.errors.filter((e) =>
          /needed to convert|without a successor/.test(e.message),
        );
        expect(conversionErrors).toEqual([]);
        const converted = imported.warnings.filter(
          (w) => w.field === 'apiVersion' && /converted to/.test(w.message),
        );
        let objects = 0;
        const left: string[] = [];
        for (const b of imported.config.bundles) {
          for (const p of b.properties ?? []) {
            if (p.type !== 'olm.bundle.object') continue;
            objects++;
            const m = JSON.parse(
              Buffer.from((p.value as { data: string }).data, 'base64').toString('utf8'),
            ) as JsonObject;
            if (removedApi(String(m.apiVersion), String(m.kind)))
              left.push(`${b.name}: ${String(m.kind)}/${String((m.metadata as JsonObject)?.name)}`);
          }
        }
        process.stderr.write(
          `[corpus] import with --convert-removed-apis: ${imported.packages} packages, ${imported.bundles} bundles, ${objects} objects, ${converted.length} converted\n`,
        );
        expect(converted.length).toBeGreaterThan(2000);
        expect(left).toEqual([]);
      },
    );
  },
);
