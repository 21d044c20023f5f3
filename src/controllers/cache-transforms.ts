/**
 * What the manager's informers keep of each object. Caches live as long as the manager and hold
 * every CRD and CSV of the cluster, so what no reconcile reads is left out as objects arrive:
 * - every object: `metadata.managedFields` (server-side apply's record of who set each field,
 *   as large as the object's spec) and the last-applied annotation of client-side `kubectl apply`
 *   (a whole copy of the object);
 * - a CustomResourceDefinition: each version's schema and printer columns, most of a CRD's size;
 *   pruning reads schemas from the API server when it needs them (src/kube/schemas.ts);
 * - a ClusterServiceVersion: its icon, description, examples and the UI descriptors of its APIs,
 *   which are for people browsing a catalog;
 * - a finished InstallPlan (Complete or Failed): the manifest of each step. Nothing reads or
 *   writes a finished plan again, and its manifests (whole CRDs and CSVs) were most of the
 *   cache; a plan still to run keeps them, since its status is written back whole.
 * On a cluster with the OperatorHub corpus installed this is most of what the manager held.
 * Nothing is written back from these caches whole: status writes send status only, and other
 * writes send the fields they set.
 */
import type { KubeObject } from '../apis/meta.js';

const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration';
/** CSV annotations for browsing (`alm-examples`, `operatorframework.io/initialization-resource`, ...). */
const browsingAnnotations = ['alm-examples', 'operatorframework.io/initialization-resource'];

type Json = Record<string, unknown>;
const isMap = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `obj` without managedFields and the last-applied annotation. */
export function withoutBookkeeping<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata;
  if (meta === undefined) return obj;
  const annotations = meta.annotations;
  const hasLastApplied = annotations !== undefined && Object.hasOwn(annotations, lastApplied);
  if (meta.managedFields === undefined && !hasLastApplied) return obj;
  const { managedFields: _managedFields, ...rest } = meta;
  const out = { ...obj, metadata: rest };
  if (hasLastApplied) out.metadata.annotations = omit(annotations, [lastApplied]);
  return out;
}

/** A CRD without its versions' schemas and printer columns. */
export function slimCRD<T extends KubeObject>(crd: T): T {
  const obj = withoutBookkeeping(crd) as T & { spec?: Json };
  const spec = obj.spec;
  if (!isMap(spec) || !Array.isArray(spec.versions)) return obj;
  const versions = spec.versions.map((v: unknown) => {
    if (!isMap(v)) return v;
    const { schema: _schema, additionalPrinterColumns: _columns, ...rest } = v;
    return rest;
  });
  const { validation: _validation, additionalPrinterColumns: _columns, ...restSpec } = spec;
  return { ...obj, spec: { ...restSpec, versions } };
}

/** A CSV without what is only for browsing. */
export function slimCSV<T extends KubeObject>(csv: T): T {
  const obj = withoutBookkeeping(csv) as T & { spec?: Json };
  const annotations = obj.metadata?.annotations;
  const out = { ...obj };
  if (annotations !== undefined && browsingAnnotations.some((a) => Object.hasOwn(annotations, a)))
    out.metadata = { ...obj.metadata, annotations: omit(annotations, browsingAnnotations) };
  const spec = obj.spec;
  if (!isMap(spec)) return out;
  const { icon: _icon, description: _description, ...restSpec } = spec;
  const crds = restSpec.customresourcedefinitions;
  if (isMap(crds)) restSpec.customresourcedefinitions = withoutDescriptors(crds);
  const apis = restSpec.apiservicedefinitions;
  if (isMap(apis)) restSpec.apiservicedefinitions = withoutDescriptors(apis);
  return { ...out, spec: restSpec };
}

/** An InstallPlan, without its steps' manifests once it is finished. */
export function slimInstallPlan<T extends KubeObject>(ip: T): T {
  const obj = withoutBookkeeping(ip) as T & { status?: Json };
  const status = obj.status;
  if (!isMap(status) || (status.phase !== 'Complete' && status.phase !== 'Failed')) return obj;
  if (!Array.isArray(status.plan)) return obj;
  const plan = status.plan.map((step: unknown) => {
    if (!isMap(step) || !isMap(step.resource)) return step;
    const { manifest: _manifest, ...resource } = step.resource;
    return { ...step, resource };
  });
  return { ...obj, status: { ...status, plan } };
}

/** `owned` and `required` API descriptions without their UI descriptors and descriptions. */
function withoutDescriptors(defs: Json): Json {
  const slim = (list: unknown) =>
    Array.isArray(list)
      ? list.map((d: unknown) => {
          if (!isMap(d)) return d;
          const {
            specDescriptors: _spec,
            statusDescriptors: _status,
            actionDescriptors: _action,
            description: _description,
            ...rest
          } = d;
          return rest;
        })
      : list;
  const out = { ...defs };
  if (Object.hasOwn(defs, 'owned')) out.owned = slim(defs.owned);
  if (Object.hasOwn(defs, 'required')) out.required = slim(defs.required);
  return out;
}

function omit(map: Record<string, string>, keys: readonly string[]): Record<string, string> {
  const out = { ...map };
  for (const k of keys) delete out[k];
  return out;
}
