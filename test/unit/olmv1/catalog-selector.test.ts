import { describe, expect, it } from 'vitest';
import type { LabelSelector } from '../../../src/apis/meta.js';
import { catalogSelector } from '../../../src/olmv1/catalog-selector.js';

const LABEL =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const NAME =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

describe('a ClusterExtension’s catalog selector, as apimachinery reads it for v1', () => {
  it.for([
    [
      { matchExpressions: [{ key: 'tier', operator: 'In', values: [] }] },
      `values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty`,
    ],
    [
      { matchExpressions: [{ key: 'tier', operator: 'Exists', values: ['a', 'b'] }] },
      'values: Invalid value: []string{"a", "b"}: values set must be empty for exists and does not exist',
    ],
    [
      { matchExpressions: [{ key: 'tier', operator: 'Equals', values: ['a'] }] },
      '"Equals" is not a valid label selector operator',
    ],
    [{ matchLabels: { tier: '-a' } }, `values[0][tier]: Invalid value: "-a": ${LABEL}`],
    [
      { matchExpressions: [{ key: 'tier', operator: 'In', values: ['ok', 'x'.repeat(64)] }] },
      `values[1][tier]: Invalid value: "${'x'.repeat(64)}": must be no more than 63 characters`,
    ],
    [
      { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist', values: ['é'] }] },
      `[values: Invalid value: []string{"é"}: values set must be empty for exists and does not exist, values[0][tier]: Invalid value: "é": ${LABEL}]`,
    ],
    [{ matchLabels: { 'bad key': 'a' } }, `key: Invalid value: "bad key": name part ${NAME}`],
    [
      { matchExpressions: [{ key: '/tier', operator: 'Exists' }] },
      'key: Invalid value: "/tier": prefix part must be non-empty',
    ],
    [
      { matchExpressions: [{ key: 'Example.com/tier', operator: 'Exists' }] },
      `key: Invalid value: "Example.com/tier": prefix part ${SUBDOMAIN}`,
    ],
    [
      { matchExpressions: [{ key: 'a/b/c', operator: 'Exists' }] },
      `key: Invalid value: "a/b/c": a qualified name ${NAME} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ],
  ] as [LabelSelector, string][])('refuses %j with v1’s message', ([selector, message]) => {
    expect(catalogSelector(selector)).toEqual({ ok: false, message });
  });

  it('selects every catalog without a selector or with an empty one, and by labels otherwise', () => {
    for (const s of [undefined, {}]) {
      const r = catalogSelector(s);
      expect(r.ok && r.value(undefined) && r.value({ tier: 'a' })).toBe(true);
    }
    const r = catalogSelector({
      matchLabels: { tier: 'a' },
      matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }],
    });
    expect(
      r.ok && [r.value({ tier: 'a' }), r.value({ tier: 'a', env: 'prod' }), r.value({ tier: 'b' })],
    ).toEqual([true, false, false]);
  });

  it('checks keys and values of any length in linear time', () => {
    // A custom resource's label selector has no length limit short of the object's (1.5 MiB).
    const long = `a${'-'.repeat(200_000)}!`;
    const started = performance.now();
    for (const selector of [
      { matchLabels: { [long]: 'a' } },
      { matchLabels: { tier: long } },
      { matchExpressions: [{ key: `${'a-'.repeat(100_000)}-/x`, operator: 'Exists' as const }] },
    ]) {
      const r = catalogSelector(selector);
      expect(r.ok).toBe(false);
    }
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
