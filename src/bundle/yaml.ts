/**
 * YAML document streams as Kubernetes reads them. js-yaml is used rather than `yaml` because it is
 * several times faster on large CRDs (importing the 2021 OperatorHub corpus parses 130 MB), and
 * with its core schema it resolves scalars the way Kubernetes' YAML-to-JSON does for manifests:
 * timestamps stay strings, duplicate keys are errors. Plain block YAML, which most catalogs and
 * manifests are, is read by yaml-block.ts instead, with the same outcome in half the time.
 */
import jsyaml from 'js-yaml';
import type { Problem } from '../util/result.js';
import { readBlockYaml } from './yaml-block.js';

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
  const source = stripBom(text);
  // Most catalogs and manifests are plain block YAML, which a faster reader reads the same way.
  const fast = readBlockYaml(source);
  if (fast) return { ok: true, docs: fast };
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
    return { ok: true, docs: load(false) };
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
