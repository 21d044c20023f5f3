/**
 * The acceptance bar of the v1beta1 → v1 CRD conversion is the real API server. Every v1beta1
 * CRD of the OperatorHub 2021 corpus (BOSUN_CORPUS_DIR) is converted and sent the way Bosun
 * installs a CRD (server-side apply under the field manager `bosun`), as a server-side dry run:
 * the API server validates exactly as for a real create, and the same CRD name can be tried with
 * each of its distinct contents (packages ship many versions of one CRD). A sample is also
 * created for real and must become Established, and one converted CRD shows that custom
 * resources keep the fields their v1beta1 schema did not declare, as they did in v1beta1.
 */
import { PatchStrategy } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import { upgradeManifest } from '../../../src/bundle/upgrade/index.js';
import { mapConcurrently } from '../../../src/catalog/load.js';
import { applyPatchBody, FieldManager } from '../../../src/kube/apply.js';
import { installCrds } from '../../../src/kube/crds.js';
import {
  corpusDir,
  corpusManifests,
  corpusSkipMessage,
  isV1beta1CRD,
} from '../../unit/bundle/upgrade/corpus.js';
import { connect } from '../kube/helpers.js';
import { freshNamespace } from '../support.js';

const crdPath = (name: string) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;

const { client, applier } = connect();
const created: string[] = [];

afterAll(async () => {
  await Promise.all(
    created.map((name) => client.request({ method: 'DELETE', path: crdPath(name) }).catch(() => undefined)),
  );
  client.close();
});

/**
 * The CRD under a group of this run's own (`t<pid>.` before the original group, so a protected
 * `*.k8s.io` group stays protected): what the shared cluster already holds (CRDs other tests
 * installed from the same corpus, with their stored versions) cannot change the answer, and what
 * this test creates and deletes is its own.
 */
function isolated(crd: KubeObject): KubeObject {
  const spec = (crd as unknown as { spec: { group: string; names: { plural: string } } }).spec;
  const group = `t${process.pid}.${spec.group}`;
  return {
    ...crd,
    metadata: { ...crd.metadata, name: `${spec.names.plural}.${group}` },
    spec: { ...spec, group },
  } as KubeObject;
}

/** The API server's answer to a dry-run apply: undefined when accepted, else its message. */
async function dryRunApply(crd: KubeObject): Promise<string | undefined> {
  try {
    await client.request({
      method: 'PATCH',
      path: crdPath(crd.metadata!.name!),
      query: { fieldManager: FieldManager, force: true, dryRun: 'All' },
      body: applyPatchBody(crd, 'spec'),
      contentType: PatchStrategy.ServerSideApply,
      timeoutMs: 120_000,
    });
    return undefined;
  } catch (err) {
    const body = (err as { body?: unknown }).body;
    const text = typeof body === 'string' ? body : JSON.stringify(body ?? String(err));
    try {
      return (JSON.parse(text) as { message?: string }).message ?? text;
    } catch {
      return text;
    }
  }
}

if (!corpusDir) process.stderr.write(`${corpusSkipMessage}\n`);

describe.skipIf(!corpusDir)(
  'v1beta1 CRDs of the OperatorHub corpus, converted to v1, on a real API server',
  () => {
    const converted = new Map<string, { where: string; crd: KubeObject }>();

    it('every converted CRD is accepted by a server-side dry-run apply', { timeout: 1_800_000 }, async () => {
      const manifests = corpusManifests(corpusDir!, isV1beta1CRD);
      const refusedByConverter: string[] = [];
      for (const m of manifests) {
        const r = upgradeManifest(m.object, { file: m.where });
        if (!r.ok) {
          refusedByConverter.push(`${m.where}: ${r.errors.map((e) => e.message).join('; ')}`);
          continue;
        }
        const key = JSON.stringify(r.value.object);
        if (!converted.has(key))
          converted.set(key, { where: m.where, crd: isolated(r.value.object as unknown as KubeObject) });
      }
      expect(refusedByConverter).toEqual([]);

      const started = performance.now();
      const refused: string[] = [];
      await mapConcurrently([...converted.values()], 4, async ({ where, crd }) => {
        const message = await dryRunApply(crd);
        if (message !== undefined) refused.push(`${where} (${crd.metadata?.name}): ${message}`);
      });
      const seconds = (performance.now() - started) / 1000;
      const names = new Set([...converted.values()].map((c) => c.crd.metadata?.name));
      process.stderr.write(
        `[legacy CRDs] ${manifests.length} v1beta1 CRDs in the corpus, ${converted.size} distinct after conversion ` +
          `(${names.size} names); ${converted.size - refused.length} accepted, ${refused.length} refused; ` +
          `dry-run applies took ${seconds.toFixed(1)} s (${((seconds * 1000) / converted.size).toFixed(0)} ms each, 4 at a time)\n`,
      );
      expect(manifests.length).toBeGreaterThan(2000);
      expect(refused).toEqual([]);
    });

    it(
      'a sample of converted CRDs is created for real and becomes Established',
      { timeout: 600_000 },
      async () => {
        // One content per name (the last read), every tenth name: packages of every kind of CRD.
        // CRDs with a conversion webhook are left out: they become Established only once the
        // webhook's CA bundle is real, which the corpus leaves as a placeholder for the operator's
        // install to fill in (the dry run above shows the API server accepts them).
        const byName = new Map<string, KubeObject>();
        for (const { crd } of converted.values()) {
          const spec = (crd as unknown as { spec: { conversion?: { strategy?: string } } }).spec;
          if (spec.conversion?.strategy !== 'Webhook') byName.set(crd.metadata!.name!, crd);
        }
        const sample = [...byName.keys()]
          .sort()
          .filter((_, i) => i % 10 === 0)
          .map((name) => byName.get(name)!);
        expect(sample.length).toBeGreaterThan(20);
        created.push(...sample.map((c) => c.metadata!.name!));
        const started = performance.now();
        await installCrds(applier, client, sample, { timeoutMs: 300_000 });
        process.stderr.write(
          `[legacy CRDs] ${sample.length} converted CRDs applied and Established in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
        );
      },
    );
  },
);

describe('a converted v1beta1 CRD on a real API server', () => {
  const legacy = {
    apiVersion: 'apiextensions.k8s.io/v1beta1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.legacy.bosun.dev' },
    spec: {
      group: 'legacy.bosun.dev',
      version: 'v1alpha1',
      names: { kind: 'Gadget', plural: 'gadgets' },
      subresources: { status: {} },
      validation: {
        openAPIV3Schema: {
          properties: {
            spec: {
              properties: {
                replicas: { type: 'integer', minimum: 1 },
                size: { anyOf: [{ type: 'integer' }, { type: 'string' }] },
              },
            },
          },
        },
      },
    },
  };

  it('keeps the fields its v1beta1 schema did not declare, at any depth, and still validates declared ones', async () => {
    const r = upgradeManifest(legacy);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const crd = r.value.object as unknown as KubeObject;
    created.push(crd.metadata!.name!);
    await installCrds(applier, client, [crd], { timeoutMs: 120_000 });
    const ns = await freshNamespace('legacy');
    const gadgets = `/apis/legacy.bosun.dev/v1alpha1/namespaces/${ns}/gadgets`;
    await client.request({
      method: 'POST',
      path: gadgets,
      body: {
        apiVersion: 'legacy.bosun.dev/v1alpha1',
        kind: 'Gadget',
        metadata: { name: 'g' },
        spec: { replicas: 2, size: '10Gi', undeclared: { nested: [1, 2] } },
        topLevel: 'kept',
      },
    });
    const stored = await client.request<Record<string, unknown>>({ path: `${gadgets}/g` });
    expect(stored.spec).toEqual({ replicas: 2, size: '10Gi', undeclared: { nested: [1, 2] } });
    expect(stored.topLevel).toBe('kept');

    const refused = client.request({
      method: 'POST',
      path: gadgets,
      body: {
        apiVersion: 'legacy.bosun.dev/v1alpha1',
        kind: 'Gadget',
        metadata: { name: 'bad' },
        spec: { replicas: 0 },
      },
    });
    await expect(refused).rejects.toMatchObject({ code: 422 });
  });
});
