/**
 * A ClusterExtension's `spec.config.inline` checked against its bundle's install modes as OLM v1
 * checks it (operator-controller's registryv1.go schema and config.go formats): every combination
 * of the install modes that matter with watchNamespace unset, the install namespace and another;
 * names that are not namespace names and values that are not strings; unknown keys, v1's
 * deploymentConfig among them; and where the install modes come from in a catalog's bundle.
 */
import { describe, expect, it } from 'vitest';
import type { BundleDoc } from '../../../src/apis/fbc.js';
import type { InstallMode } from '../../../src/apis/operators.js';
import { bundleInstallModes, checkBundleConfig } from '../../../src/olmv1/bundle-config.js';

const ns = 'operators';
const modes = (...supported: string[]): InstallMode[] =>
  (['OwnNamespace', 'SingleNamespace', 'MultiNamespace', 'AllNamespaces'] as const).map((type) => ({
    type,
    supported: supported.includes(type),
  }));

const check = (
  inline: Record<string, unknown> | undefined,
  installModes: InstallMode[] | undefined,
  groupGiven = false,
) =>
  checkBundleConfig({
    config: inline === undefined ? undefined : { configType: 'Inline', inline },
    namespace: ns,
    bundle: 'op.v1.0.0',
    installModes,
    groupGiven,
  });

/** Whether a message holds a control character (a raw newline or terminal escape of the user's). */
const hasControl = (s: string) => [...s].some((c) => c.charCodeAt(0) < 0x20);

/** What the check says, in short: ok (with the namespace watched) or the class of refusal. */
function verdict(r: ReturnType<typeof check>): string {
  if (r.ok) return `ok ${r.value.watchNamespace ?? '(all)'}`;
  if (r.message.includes('required field "watchNamespace" is missing')) return 'required';
  if (r.message.includes('unknown field "watchNamespace"')) return 'not allowed';
  if (r.message.includes('must be "operators"')) return 'must be own';
  if (r.message.includes('must be different from "operators"')) return 'must differ';
  if (r.message.includes('unsupported bundle')) return 'unsupported';
  return r.message;
}

describe('watchNamespace against the bundle’s install modes', () => {
  // [supported modes, unset, the install namespace, another namespace]
  const table: [string[], string, string, string][] = [
    [['AllNamespaces'], 'ok (all)', 'not allowed', 'not allowed'],
    [['OwnNamespace'], 'required', 'ok operators', 'must be own'],
    [['SingleNamespace'], 'required', 'must differ', 'ok other'],
    [['OwnNamespace', 'SingleNamespace'], 'required', 'ok operators', 'ok other'],
    [['AllNamespaces', 'OwnNamespace'], 'ok (all)', 'ok operators', 'must be own'],
    [['AllNamespaces', 'SingleNamespace'], 'ok (all)', 'must differ', 'ok other'],
    [['AllNamespaces', 'OwnNamespace', 'SingleNamespace'], 'ok (all)', 'ok operators', 'ok other'],
    [['AllNamespaces', 'MultiNamespace'], 'ok (all)', 'not allowed', 'not allowed'],
    [['OwnNamespace', 'MultiNamespace'], 'required', 'ok operators', 'must be own'],
    [['MultiNamespace'], 'unsupported', 'unsupported', 'unsupported'],
    [[], 'unsupported', 'unsupported', 'unsupported'],
  ];
  it.each(table)('supported %j: unset %s, own %s, other %s', (supported, unset, own, other) => {
    const m = modes(...supported);
    expect(verdict(check(undefined, m))).toBe(unset);
    expect(verdict(check({ watchNamespace: null }, m))).toBe(unset);
    expect(verdict(check({ watchNamespace: ns }, m))).toBe(own);
    expect(verdict(check({ watchNamespace: 'other' }, m))).toBe(other);
  });

  it('counts a mode as supported only when it says supported: true', () => {
    const m: InstallMode[] = [
      { type: 'AllNamespaces', supported: false },
      { type: 'OwnNamespace', supported: true },
    ];
    expect(verdict(check(undefined, m))).toBe('required');
  });

  it('words each refusal as v1 does, then names the field and what the bundle supports', () => {
    expect(check(undefined, modes('OwnNamespace'))).toEqual({
      ok: false,
      message:
        'invalid ClusterExtension configuration: invalid configuration: required field "watchNamespace" is missing: spec.config.inline.watchNamespace must name the namespace the operator watches ("operators", the install namespace), as bundle op.v1.0.0 supports OwnNamespace and not AllNamespaces',
    });
    expect(check({ watchNamespace: 'some-ns' }, modes('OwnNamespace'))).toEqual({
      ok: false,
      message:
        'invalid ClusterExtension configuration: invalid configuration: invalid format for field "watchNamespace": invalid value "some-ns": must be "operators" (the namespace where the operator is installed) because this operator only supports OwnNamespace install mode: spec.config.inline.watchNamespace, as bundle op.v1.0.0 supports OwnNamespace',
    });
    expect(check({ watchNamespace: ns }, modes('SingleNamespace'))).toMatchObject({
      message: expect.stringContaining(
        'invalid value "operators": must be different from "operators" (the install namespace) because this operator uses SingleNamespace install mode to watch a different namespace: spec.config.inline.watchNamespace, as bundle op.v1.0.0 supports SingleNamespace',
      ),
    });
    expect(check({ watchNamespace: 'x' }, modes('AllNamespaces'))).toEqual({
      ok: false,
      message:
        'invalid ClusterExtension configuration: invalid configuration: unknown field "watchNamespace": spec.config.inline.watchNamespace is not allowed, as bundle op.v1.0.0 supports AllNamespaces only (the operator watches every namespace)',
    });
    expect(check(undefined, modes('MultiNamespace'))).toMatchObject({
      message: expect.stringContaining(
        'unsupported bundle: bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes: bundle op.v1.0.0 supports MultiNamespace',
      ),
    });
  });

  it('leaves an unset watchNamespace to an OperatorGroup the namespace has of its own, and checks a set one all the same', () => {
    expect(verdict(check(undefined, modes('OwnNamespace'), true))).toBe('ok (all)');
    expect(verdict(check(undefined, modes('MultiNamespace'), true))).toBe('ok (all)');
    expect(verdict(check({ watchNamespace: 'other' }, modes('OwnNamespace'), true))).toBe('must be own');
    expect(verdict(check({ watchNamespace: 'x' }, modes('AllNamespaces'), true))).toBe('not allowed');
  });

  it('checks only the name and the keys when the catalog does not give the install modes', () => {
    expect(check({ watchNamespace: ns }, undefined)).toEqual({ ok: true, value: { watchNamespace: ns } });
    expect(check({ watchNamespace: 'other' }, undefined)).toEqual({
      ok: true,
      value: { watchNamespace: 'other' },
    });
    expect(check(undefined, undefined)).toEqual({ ok: true, value: {} });
    expect(verdict(check({ watchNamespace: 'Bad' }, undefined))).toContain('must match pattern');
  });
});

describe('a watchNamespace that is not a namespace name', () => {
  const all = modes('AllNamespaces', 'OwnNamespace', 'SingleNamespace');
  it.each([
    ['upper case', 'Operators', 'must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"'],
    ['an underscore', 'my_ns', 'must match pattern'],
    ['a dot (a DNS subdomain, not a label)', 'my.ns', 'must match pattern'],
    ['a leading dash', '-ns', 'must match pattern'],
    ['a trailing dash', 'ns-', 'must match pattern'],
    ['a path', '../kube-system', 'must match pattern'],
    ['a space', 'kube system', 'must match pattern'],
    ['a newline (a forged second line)', 'ns\nInstalled: True', 'must match pattern'],
    ['a terminal escape', '\u001b[31mns', 'must match pattern'],
    ['a lookalike letter', 'kube-systеm', 'must match pattern'],
    ['64 characters', 'a'.repeat(64), 'must have maximum length of 63 (len=64)'],
    ['empty', '', 'must have minimum length of 1 (len=0)'],
  ])('%s is refused, naming the field', (_, name, says) => {
    const r = check({ watchNamespace: name }, all);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.message).toContain(says);
    expect(r.message).toContain('spec.config.inline.watchNamespace');
    // The user's value is quoted with its escapes, never raw: one line, no control characters.
    expect(hasControl(r.message)).toBe(false);
  });

  it('is quoted in at most 64 characters, with its length, however long', () => {
    const r = check({ watchNamespace: 'x'.repeat(100_000) }, all);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.message).toContain('(len=100000)');
    expect(r.message).toContain(`"${'x'.repeat(64)}"... (100000 characters)`);
    expect(r.message.length).toBeLessThan(600);
  });

  it.each([
    ['a number', 42, 'got number'],
    ['a boolean', true, 'got boolean'],
    ['an object', { name: 'ns' }, 'got object'],
    ['a list', ['a', 'b'], 'got array'],
  ])('%s is refused as the wrong type', (_, value, got) => {
    const r = check({ watchNamespace: value }, all);
    expect(r).toMatchObject({
      ok: false,
      message: expect.stringContaining(`invalid type for field "watchNamespace": ${got}, want string`),
    });
  });

  it('63 characters of letters, digits and inner dashes is a name', () => {
    const name = `a${'-b'.repeat(31)}`;
    expect(name).toHaveLength(63);
    expect(check({ watchNamespace: name }, all)).toEqual({ ok: true, value: { watchNamespace: name } });
    expect(check({ watchNamespace: '0' }, all)).toEqual({ ok: true, value: { watchNamespace: '0' } });
  });
});

describe('keys other than watchNamespace', () => {
  const all = modes('AllNamespaces', 'OwnNamespace', 'SingleNamespace');
  it('an unknown key is refused, naming it', () => {
    expect(check({ watchNamesapce: 'ns' }, all)).toEqual({
      ok: false,
      message:
        'invalid ClusterExtension configuration: invalid configuration: unknown field "watchNamesapce": spec.config.inline of a registry+v1 bundle takes only "watchNamespace"',
    });
  });

  it('v1’s deploymentConfig is refused as not served yet', () => {
    const r = check({ deploymentConfig: { env: [{ name: 'A', value: 'b' }] } }, all);
    expect(r).toMatchObject({
      ok: false,
      message: expect.stringContaining(
        'unknown field "deploymentConfig": spec.config.inline.deploymentConfig is not served by Bosun yet',
      ),
    });
  });

  it('every problem is reported at once, as v1 lists them', () => {
    const r = check({ b: 1, a: 2, watchNamespace: 'other' }, modes('OwnNamespace'));
    expect(r).toEqual({
      ok: false,
      message: expect.stringMatching(
        /^invalid ClusterExtension configuration: invalid configuration: multiple errors found:\n {2}- unknown field "a": .*\n {2}- unknown field "b": .*\n {2}- invalid format for field "watchNamespace": invalid value "other": must be "operators"/,
      ),
    });
  });

  it('hostile keys are quoted with their escapes, cut short, and counted beyond five', () => {
    const inline: Record<string, unknown> = JSON.parse(
      JSON.stringify({
        ['k\nInstalled: True']: 1,
        ['\u001b[2J']: 1,
        ['z'.repeat(10_000)]: 1,
        __proto__: { polluted: true },
        ...Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`key${i}`, i])),
      }),
    );
    const r = check(inline, all);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(hasControl(r.message.replaceAll('\n', ''))).toBe(false);
    expect(
      r.message.split('\n').every((line) => !line.includes('Installed: True') || line.includes('\\n')),
    ).toBe(true);
    expect(r.message).toContain('more unknown fields in spec.config.inline');
    expect(r.message.length).toBeLessThan(2000);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('the install modes of a catalog’s bundle', () => {
  const bundle = (properties: BundleDoc['properties']) => ({ properties });
  const csvObject = (installModes: unknown) => ({
    type: 'olm.bundle.object',
    value: {
      data: Buffer.from(JSON.stringify({ kind: 'ClusterServiceVersion', spec: { installModes } })).toString(
        'base64',
      ),
    },
  });
  it('come from olm.csv.metadata, as opm writes it', () => {
    expect(
      bundleInstallModes(
        bundle([{ type: 'olm.csv.metadata', value: { installModes: modes('OwnNamespace') } }, csvObject([])]),
      ),
    ).toEqual(modes('OwnNamespace'));
  });
  it('else from the inline CSV', () => {
    expect(bundleInstallModes(bundle([csvObject(modes('SingleNamespace'))]))).toEqual(
      modes('SingleNamespace'),
    );
  });
  it('are unknown without either, or when they are not a list', () => {
    expect(
      bundleInstallModes(bundle([{ type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } }])),
    ).toBe(undefined);
    expect(bundleInstallModes(bundle([{ type: 'olm.csv.metadata', value: { installModes: 'all' } }]))).toBe(
      undefined,
    );
  });
  it('leave out entries that are not a type and a boolean', () => {
    expect(
      bundleInstallModes(
        bundle([
          {
            type: 'olm.csv.metadata',
            value: {
              installModes: [{ type: 'OwnNamespace', supported: 'true' }, null, ...modes('AllNamespaces')],
            },
          },
        ]),
      ),
    ).toEqual(modes('AllNamespaces'));
  });
});
