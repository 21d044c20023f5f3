/**
 * What the bundles of the OperatorHub 2021 corpus (BOSUN_CORPUS_DIR) grant, screened as the
 * InstallPlan controller screens them (catalog import, bundle decoding, install/rbac-policy.ts),
 * each installed where the corpus-install benchmark installs it (`op-<package>`).
 *
 * Three packages ship such RBAC, all the same way: a ClusterRoleBinding of a powerful role to
 * ServiceAccounts of a namespace written into the bundle, which is not the install namespace:
 * - flux (every version): cluster-admin to flux-system/kustomize-controller and helm-controller;
 * - pystol 0.8.17: cluster-admin to pystol/pystol and to the user system:serviceaccount:pystol:default
 *   (every Pod of namespace pystol that names no ServiceAccount);
 * - universal-crossplane (every version): roles that escalate, bind or impersonate, to
 *   ServiceAccounts of upbound-system.
 * Installed elsewhere, those subjects are left out; every default-channel head still plans, with
 * its CSV and every other object, so the corpus installs as before.
 */
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DeclarativeConfig } from '../../../src/apis/fbc.js';
import { importOperatorsDir } from '../../../src/catalog/import.js';
import { withPayloads } from '../../../src/catalog/payloads.js';
import { decodeBundle, type InstallableBundle } from '../../../src/install/bundle-objects.js';
import { planInstall } from '../../../src/install/plan.js';
import {
  FindingKind,
  formatFinding,
  type RbacFinding,
  screenBundleRbac,
} from '../../../src/install/rbac-policy.js';
import { scopedRefusals } from '../../../src/install/scoped-install.js';
import { namespaceFor, planPackages } from '../../support/corpus-install.js';

const corpus = process.env.BOSUN_CORPUS_DIR;
const present = corpus !== undefined && existsSync(corpus);
if (!present) {
  console.warn(
    'skipping the corpus RBAC screening: set BOSUN_CORPUS_DIR to shared/corpus/operatorhub-2021/upstream-community-operators',
  );
}

describe.skipIf(!present)('the RBAC the corpus bundles ship (BOSUN_CORPUS_DIR)', () => {
  let config: DeclarativeConfig;
  const bundles = new Map<string, InstallableBundle>();
  const findings = new Map<string, RbacFinding[]>();

  beforeAll(async () => {
    ({ config } = await importOperatorsDir(corpus!));
    for (const doc of config.bundles) {
      const decoded = decodeBundle(await withPayloads(doc));
      if (!decoded.ok) continue;
      bundles.set(doc.name, decoded.value);
      const screened = screenBundleRbac({
        bundle: decoded.value,
        namespace: namespaceFor('op', doc.package),
      });
      if (screened.findings.length > 0) findings.set(doc.name, screened.findings);
    }
  }, 600_000);

  it('finds bindings beyond the operator in flux, pystol and universal-crossplane only', () => {
    expect(bundles.size).toBeGreaterThan(1000);
    for (const [bundle, fs] of findings) console.info(`${bundle}:\n  ${fs.map(formatFinding).join('\n  ')}`);
    const packages = new Set([...findings.keys()].map((name) => bundles.get(name)?.package));
    expect([...packages].sort()).toEqual(['flux', 'pystol', 'universal-crossplane']);
    expect([...findings.keys()].filter((b) => b.startsWith('flux.'))).toHaveLength(9);
    // No corpus bundle binds anything to a broad group, or renames the cluster's own roles.
    const kinds = new Set([...findings.values()].flat().map((f) => f.kind));
    expect([...kinds]).toEqual([FindingKind.PowerfulRoleToOthers]);
    expect(findings.get('pystol.v0.8.17')?.map((f) => f.subject)).toEqual([
      'ServiceAccount pystol/pystol',
      'User system:serviceaccount:pystol:default',
    ]);
  });

  it('finds nothing in flux installed in the namespace it suggests: those are its own ServiceAccounts there', () => {
    const flux = bundles.get('flux.v0.16.1')!;
    expect(screenBundleRbac({ bundle: flux, namespace: 'flux-system' }).findings).toEqual([]);
  });

  it('leaves every default-channel head installable: its CSV and every object but the refused RBAC planned', () => {
    let planned = 0;
    for (const plan of planPackages(config)) {
      const bundle = bundles.get(plan.head);
      if (bundle === undefined) continue;
      const screened = screenBundleRbac({ bundle, namespace: plan.namespace });
      const r = planInstall({
        bundle: screened.bundle,
        namespace: plan.namespace,
        targets: { operatorGroup: 'og', namespaces: plan.targetNamespaces ?? [''] },
        source: { name: 'corpus', namespace: 'olm' },
      });
      expect(r.ok, plan.head).toBe(true);
      const kept = new Set(screened.bundle.objects.map((o) => `${o.kind}/${o.name}`));
      const refused = new Set((findings.get(plan.head) ?? []).map((f) => f.object));
      for (const o of bundle.objects) {
        const key = `${o.kind}/${o.name}`;
        // Left out is only a binding all of whose subjects were refused.
        if (!kept.has(key)) expect(refused.has(key), `${plan.head} ${key}`).toBe(true);
      }
      planned++;
    }
    expect(planned).toBeGreaterThan(185);
  });

  it('counts the bundles a group scoped to a ServiceAccount would refuse up front (* on *, cluster-admin)', () => {
    const refused = [...bundles.values()].filter((b) => scopedRefusals(b).length > 0);
    console.info(`${refused.length} of ${bundles.size} corpus bundles ask for everything`);
    expect(refused.map((b) => b.name)).toContain('zoperator.v0.3.6');
    expect(refused.some((b) => b.package === 'flux')).toBe(true);
    expect(refused.length).toBeLessThan(bundles.size / 5);
  });
});
