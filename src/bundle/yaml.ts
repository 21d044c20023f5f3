/**
 * YAML document streams as Kubernetes reads them. js-yaml is used rather than `yaml` because it is
 * several times faster on large CRDs (importing the 2021 OperatorHub corpus parses 130 MB), and
 * with its core schema it resolves scalars the way Kubernetes' YAML-to-JSON does for manifests:
 * timestamps stay strings, duplicate keys are errors.
 */
import jsyaml from 'js-yaml';
import type { Problem } from '../util/result.js';

export interface ParsedDoc {
  /** Index of the document in the stream, counting empty documents, so messages can say "document 3". */
  index: number;
  value: unknown;
}

export type ParseOutcome = { ok: true; docs: ParsedDoc[] } | { ok: false; problem: Problem };

/**
 * Parses every document of a YAML stream. Empty documents (a leading `---`, comment-only parts)
 * are skipped, as `kubectl` and `opm` skip them. A syntax error fails the whole file: what follows
 * an error cannot be trusted.
 */
export function parseYamlStream(text: string, file: string, opts: YamlOptions = {}): ParseOutcome {
  const lifted = opts.liftPayloads ? liftPayloads(stripBom(text)) : undefined;
  const source = lifted ? lifted.text : stripBom(text);
  const load = (json: boolean): ParsedDoc[] => {
    const docs: ParsedDoc[] = [];
    let index = 0;
    jsyaml.loadAll(
      source,
      (value) => {
        if (value !== null && value !== undefined) docs.push({ index, value });
        index++;
      },
      { schema: jsyaml.CORE_SCHEMA, filename: file, json },
    );
    return docs;
  };
  try {
    const docs = load(false);
    if (lifted) for (const d of docs) d.value = lifted.restore(d.value);
    return { ok: true, docs };
  } catch (err) {
    const problem = { file, message: describeYamlError(err) };
    if (
      opts.onDuplicateKey &&
      err instanceof jsyaml.YAMLException &&
      /duplicated mapping key/.test(err.reason)
    ) {
      // Kubernetes' YAML decoder keeps the last value of a repeated key; so does json mode.
      try {
        const docs = load(true);
        opts.onDuplicateKey({
          ...problem,
          message: `${problem.message}; the last value was used, as Kubernetes does`,
        });
        return { ok: true, docs };
      } catch (again) {
        return { ok: false, problem: { file, message: describeYamlError(again) } };
      }
    }
    return { ok: false, problem };
  }
}

export interface YamlOptions {
  /**
   * Take long base64 values of `data:` keys (the inline manifests of `olm.bundle.object`, nearly
   * all of a catalog's bytes) out of the text before parsing and put them back after: js-yaml
   * reads plain scalars one character at a time, a regular expression skips over them.
   */
  liftPayloads?: boolean;
  /**
   * Accept repeated keys (last value wins, as Kubernetes reads manifests) and report each file
   * that has them here, instead of failing. Used when importing published operators, whose
   * manifests Kubernetes accepted; Bosun's own inputs are held to the stricter rule.
   */
  onDuplicateKey?: (p: Problem) => void;
}

/** Parses a file that must hold exactly one YAML (or JSON) document. */
export function parseYamlOne(
  text: string,
  file: string,
): { ok: true; value: unknown } | { ok: false; problem: Problem } {
  const parsed = parseYamlStream(text, file);
  if (!parsed.ok) return parsed;
  if (parsed.docs.length === 0) return { ok: false, problem: { file, message: 'the file is empty' } };
  if (parsed.docs.length > 1) {
    return {
      ok: false,
      problem: { file, message: `expected one YAML document, found ${parsed.docs.length}` },
    };
  }
  return { ok: true, value: parsed.docs[0]!.value };
}

export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function describeYamlError(err: unknown): string {
  if (err instanceof jsyaml.YAMLException) {
    const where = err.mark ? `line ${err.mark.line + 1}, column ${err.mark.column + 1}: ` : '';
    return `invalid YAML: ${where}${err.reason}`;
  }
  return `invalid YAML: ${err instanceof Error ? err.message : String(err)}`;
}

/** Serialises a value as YAML the way `opm` writes it: keys sorted, block style, no line folding. */
export function toYaml(value: unknown): string {
  return jsyaml.dump(value, {
    sortKeys: true,
    lineWidth: -1,
    noRefs: true,
    noArrayIndent: true,
    skipInvalid: true,
  });
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `data: <base64>` alone on a line, long enough to be worth lifting. */
const PAYLOAD_LINE = /^([ \t]*(?:- )?data: )([A-Za-z0-9+/]{256,}={0,2})[ \t]*$/gm;
/** A base64 text that YAML could read as a number must stay in place. */
const NOT_A_NUMBER = /[A-DF-Za-df-z+/]/;

function liftPayloads(text: string): { text: string; restore: (v: unknown) => unknown } | undefined {
  if (!text.includes('data: ')) return undefined;
  let nonce = '';
  do nonce = `bosunpayload${Math.random().toString(36).slice(2, 10)}x`;
  while (text.includes(nonce));
  const payloads: string[] = [];
  const out = text.replace(PAYLOAD_LINE, (line, head: string, b64: string) => {
    if (!NOT_A_NUMBER.test(b64)) return line;
    payloads.push(b64);
    return `${head}${nonce}${payloads.length - 1}`;
  });
  if (payloads.length === 0) return undefined;
  const token = new RegExp(`${nonce}(\\d+)`, 'g');
  const put = (s: string) => s.replace(token, (_, i: string) => payloads[Number(i)]!);
  const restore = (v: unknown): unknown => {
    if (typeof v === 'string') return v.includes(nonce) ? put(v) : v;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = restore(v[i]);
      return v;
    }
    if (v !== null && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      for (const k of Object.keys(o)) o[k] = restore(o[k]);
      return o;
    }
    return v;
  };
  return { text: out, restore };
}
