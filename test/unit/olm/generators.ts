/** Generated versions and ranges for the kernel's property tests. */
import fc from 'fast-check';

// Pieces chosen around blang's edge cases: leading zeros, numbers past 2^53 and 2^64, identifiers
// that are or contain `x`, empty identifiers.
const num = fc.constantFrom(
  '0',
  '1',
  '2',
  '3',
  '10',
  '01',
  '9007199254740993',
  '18446744073709551615',
  '18446744073709551616',
  'x',
  'X',
  '*',
  '',
);
const ident = fc.constantFrom('alpha', 'beta', 'rc', '0', '1', '2', '11', '01', 'x', 'a-b', 'A', '', 'é');
export const versionText = fc
  .tuple(
    fc.array(num, { minLength: 1, maxLength: 4 }),
    fc.option(fc.array(ident, { minLength: 1, maxLength: 3 }), { nil: undefined }),
    fc.option(fc.array(ident, { minLength: 1, maxLength: 2 }), { nil: undefined }),
  )
  .map(
    ([core, pre, build]) =>
      core.join('.') + (pre ? `-${pre.join('.')}` : '') + (build ? `+${build.join('.')}` : ''),
  );
// Mostly well-formed versions, so that range membership is exercised as well as refusal.
export const plainVersion = fc
  .tuple(
    fc.integer({ min: 0, max: 3 }),
    fc.integer({ min: 0, max: 3 }),
    fc.integer({ min: 0, max: 3 }),
    fc.option(fc.constantFrom('alpha', 'rc.1', '0', 'beta.2'), { nil: undefined }),
    fc.option(fc.constantFrom('build', '5'), { nil: undefined }),
  )
  .map(([a, b, c, pre, build]) => `${a}.${b}.${c}${pre ? `-${pre}` : ''}${build ? `+${build}` : ''}`);
export const anyVersion = fc.oneof(
  { weight: 3, arbitrary: plainVersion },
  { weight: 1, arbitrary: versionText },
);

const op = fc.constantFrom(
  '',
  '',
  '=',
  '==',
  '!',
  '!=',
  '>',
  '>=',
  '<',
  '<=',
  '^',
  '~',
  '=>',
  'x',
  'v',
  '\t>=',
);
const space = fc.constantFrom('', '', ' ', '  ', '\t');
const wildcardVersion = fc
  .tuple(
    fc.integer({ min: 0, max: 3 }),
    fc.constantFrom('x', '1', '2'),
    fc.constantFrom('', '.x', '.0', '.3', '.x.x'),
  )
  .map(([a, b, c]) => `${a}.${b}${c}`);
const comparator = fc
  .tuple(op, space, fc.oneof(plainVersion, wildcardVersion, versionText))
  .map(([o, s, v]) => `${o}${s}${v}`);
const separator = fc.constantFrom(' ', ' ', '  ', ' || ', '||', ' ||', ' | ', ' , ');
export const structuredRange = fc
  .tuple(comparator, fc.array(fc.tuple(separator, comparator), { maxLength: 4 }))
  .map(([first, rest]) => first + rest.map(([s, c]) => s + c).join(''));
// Short strings over the range alphabet find what no structure above thinks of.
export const noiseRange = fc
  .array(fc.constantFrom(...'0123456789..x-+ |<>=!^~v'.split('')), { maxLength: 16 })
  .map((cs) => cs.join(''));
