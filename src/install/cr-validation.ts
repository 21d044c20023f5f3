/**
 * Existing custom resources checked against a new CRD's schema before the CRD is replaced, so an
 * upgrade never leaves stored objects the API server would refuse to update. Pure: the schema and
 * the objects in, the invalid ones out, each with why.
 *
 * The validator is ajv, the JSON Schema validator the project already uses for its own schemas:
 * it compiles a schema once and checks a whole namespace's objects in milliseconds, and it knows
 * OpenAPI's `nullable`. Kubernetes' structural extensions are read as the API server reads them:
 * `x-kubernetes-preserve-unknown-fields` and `x-kubernetes-embedded-resource` only shape pruning
 * (undeclared fields are dropped, never refused, and ajv allows them unless a schema forbids
 * them); `x-kubernetes-int-or-string` and `format: int-or-string` accept an integer or a string
 * (their schemas carry no `type`, or an `anyOf` of both). Formats are not checked, as the API
 * server checks only a few of them.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { isRecord } from '../util/record.js';
import type { CRDShape } from './crd-safety.js';

const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
const compiled = new Map<string, ValidateFunction>();

export interface InvalidResource {
  name: string;
  namespace?: string;
  /** Each failure: the field and what is wrong with it. */
  errors: string[];
}

/** The objects of `version` that the new CRD's schema for that version refuses. */
export function invalidResources(
  next: CRDShape,
  version: string,
  objects: readonly unknown[],
): InvalidResource[] {
  const schema = next.spec?.versions?.find((v) => v.name === version)?.schema?.openAPIV3Schema;
  if (!isRecord(schema)) return [];
  const key = JSON.stringify(schema);
  let check = compiled.get(key);
  if (!check) {
    check = ajv.compile(schema);
    compiled.set(key, check);
  }
  const out: InvalidResource[] = [];
  for (const obj of objects) {
    const valid: boolean = check(obj);
    if (valid) continue;
    const meta = isRecord(obj) && isRecord(obj.metadata) ? obj.metadata : {};
    out.push({
      name: String(meta.name ?? ''),
      ...(typeof meta.namespace === 'string' ? { namespace: meta.namespace } : {}),
      errors: (check.errors ?? []).map(
        (e) => `${e.instancePath.replaceAll('/', '.') || '.'}: ${e.message ?? 'is invalid'}`,
      ),
    });
  }
  return out;
}
