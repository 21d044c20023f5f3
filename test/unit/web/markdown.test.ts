import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstParagraph } from '../../../src/web/first-paragraph.js';
import { MaxDescriptionChars, renderDescription } from '../../../src/web/markdown.js';

/** An attribute: a name, and a value quoted either way or not at all. */
const attribute = String.raw`\s+([^\s=>/]+)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?`;
/** Every attribute name in the HTML's tags, lower case. */
const attributeNames = (html: string) =>
  [...html.matchAll(new RegExp(String.raw`<[a-z][a-z0-9]*((?:${attribute})*)\s*\/?>`, 'gi'))].flatMap((m) =>
    [...(m[1] ?? '').matchAll(new RegExp(attribute, 'g'))].map((a) => a[1]!.toLowerCase()),
  );
const tagNames = (html: string) => [...html.matchAll(/<([a-z][a-z0-9]*)/gi)].map((m) => m[1]!.toLowerCase());
const hrefs = (html: string) =>
  [...html.matchAll(/\s(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi)].map(
    (m) => m[1] ?? m[2] ?? m[3]!,
  );

/** What no rendered description may contain, whatever its input. */
function expectInert(html: string) {
  expect(tagNames(html)).not.toContain('script');
  for (const t of [
    'iframe',
    'object',
    'embed',
    'style',
    'form',
    'input',
    'meta',
    'link',
    'base',
    'svg',
    'math',
  ])
    expect(tagNames(html)).not.toContain(t);
  expect(attributeNames(html).filter((a) => a.startsWith('on'))).toEqual([]);
  expect(attributeNames(html)).not.toContain('style');
  for (const url of hrefs(html))
    expect(url).toMatch(/^(https?:\/\/|mailto:|data:image\/(png|jpeg|gif|webp|svg\+xml);base64,)/i);
}

describe('renderDescription', () => {
  it('is checked by a test that catches each thing it looks for', () => {
    for (const raw of [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      "<a href='javascript:alert(1)'>x</a>",
      '<a href=javascript:alert(1)>x</a>',
      '<p style="color:red">x</p>',
      '<iframe></iframe>',
    ]) {
      expect(() => expectInert(raw), raw).toThrow();
    }
  });

  it.each([
    ['a script element', 'Hello <script>alert(1)</script> world'],
    ['a script element split by Markdown', '<scr\nipt>alert(1)</script>'],
    ['a javascript: Markdown link', '[click](javascript:alert(1))'],
    ['a javascript: link in mixed case with spaces', '<a href=" JaVaScRiPt:alert(1)">x</a>'],
    ['an entity-encoded javascript: link', '<a href="&#106;avascript:alert(1)">x</a>'],
    ['a data:text/html link', '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)'],
    ['a vbscript: link', '<a href="vbscript:msgbox(1)">x</a>'],
    ['an event handler', '<div onclick="alert(1)" onmouseover="alert(2)">x</div>'],
    ['an img onerror', '<img src=x onerror=alert(1)>'],
    ['an img onerror in Markdown image syntax', '![x](x" onerror="alert(1))'],
    ['an svg onload', '<svg onload=alert(1)><circle/></svg>'],
    ['an iframe', '<iframe src="https://evil.example"></iframe>'],
    ['a style element and attribute', '<style>*{display:none}</style><p style="position:fixed">x</p>'],
    ['a form', '<form action="https://evil.example"><input name=p><button>go</button></form>'],
    ['a meta refresh', '<meta http-equiv="refresh" content="0;url=https://evil.example">'],
    ['a base element', '<base href="https://evil.example/">'],
    ['an object and embed', '<object data="x.swf"></object><embed src="x.swf">'],
    ['a protocol-relative link', '<a href="//evil.example">x</a>'],
    ['a javascript: image', '<img src="javascript:alert(1)">'],
    ['a data:text/html image', '<img src="data:text/html;base64,AAAA">'],
    ['a math element with a link', '<math><mtext><a href="javascript:alert(1)">x</a></mtext></math>'],
    ['a comment that hides a script', '<!--><script>alert(1)</script>-->'],
    ['a textarea breakout', '<textarea></textarea><script>alert(1)</script>'],
  ])('renders %s inert', (_, input) => {
    expectInert(renderDescription(input).html);
  });

  it('keeps ordinary Markdown: emphasis, lists, code, tables, safe links', () => {
    const { html, truncated } = renderDescription(
      [
        'An **operator** for `etcd`.',
        '',
        '- one',
        '- two',
        '',
        '| a | b |',
        '|---|---|',
        '| 1 | 2 |',
        '',
        '[docs](https://etcd.example/docs) and <mailto:me@etcd.example>',
      ].join('\n'),
    );
    expect(truncated).toBe(false);
    expect(html).toContain('<strong>operator</strong>');
    expect(html).toContain('<code>etcd</code>');
    expect(html).toContain('<li>one</li>');
    expect(html).toContain('<td>1</td>');
    expect(html).toContain('href="https://etcd.example/docs"');
    expect(html).toContain('href="mailto:me@etcd.example"');
  });

  it('opens links elsewhere without a referrer or an opener', () => {
    const { html } = renderDescription('<a href="https://x.example" target="_self" rel="opener">x</a>');
    expect(html).toBe(
      '<p><a href="https://x.example" rel="noopener noreferrer nofollow" target="_blank">x</a></p>\n',
    );
  });

  it('moves headings under the package page`s own (h1 becomes h3)', () => {
    expect(tagNames(renderDescription('# A\n\n## B\n\n### C').html)).toEqual(['h3', 'h4', 'h5']);
  });

  it('shows inline data images and turns remote ones into links, so reading the page tells no other host', () => {
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    const { html } = renderDescription(`![logo](${png}) ![chart](https://img.example/c.png)`);
    expect(html).toContain(`<img src="${png}" alt="logo" />`);
    expect(html).toContain('<a href="https://img.example/c.png"');
    expect(html).toContain('[image: chart]');
    expect(tagNames(html).filter((t) => t === 'img')).toHaveLength(1);
  });

  it('keeps the text of a relative link, which means nothing on this server, without the link', () => {
    const { html } = renderDescription('see [the guide](docs/guide.md)');
    expect(html).toContain('the guide');
    expect(html).not.toContain('href');
  });

  it('cuts a huge description at a line end and says so', () => {
    const line =
      'A line of a very long description with <b>some</b> markup and a [link](https://x.example).\n';
    const huge = line.repeat(Math.ceil((MaxDescriptionChars * 5) / line.length));
    const { html, truncated } = renderDescription(huge);
    expect(truncated).toBe(true);
    expect(html.length).toBeLessThan(MaxDescriptionChars * 2);
    expect(html.endsWith('</p>\n')).toBe(true);
    expectInert(html);
  });

  it('flattens pathological nesting instead of building a tree as deep as the input', () => {
    const deep = '<div>'.repeat(5000) + 'x' + '</div>'.repeat(5000);
    const { html } = renderDescription(deep);
    expect(tagNames(html).length).toBeLessThanOrEqual(40);
    expect(html).toContain('x');
  });

  it('renders any mix of dangerous fragments inert (property)', () => {
    const fragment = fc.constantFrom(
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      '[a](javascript:alert(1))',
      '<a href="javascript:alert(1)">a</a>',
      '<div onclick=alert(1)>',
      '<svg/onload=alert(1)>',
      '<iframe srcdoc="<script>alert(1)</script>">',
      '"><script>alert(1)</script>',
      "'><img src=x onerror=alert(1)>",
      '<a href="java\tscript:alert(1)">t</a>',
      '<style>',
      '</p>',
      '`code`',
      '**bold**',
      '\n\n',
      '<',
      '>',
      '"',
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(fragment, fc.string({ maxLength: 8 })), { maxLength: 12 }), (parts) => {
        expectInert(renderDescription(parts.join('')).html);
      }),
    );
  });
});

describe('firstParagraph', () => {
  it.each([
    ['plain text', 'Runs etcd.', 'Runs etcd.'],
    ['the first paragraph only', 'First one.\n\nSecond one.', 'First one.'],
    ['a heading and an image skipped', '# Title\n\n![logo](x.png)\n\nThe operator.', 'The operator.'],
    ['markup removed', 'An **etcd** [operator](https://x.example) for `k8s`.', 'An etcd operator for k8s.'],
    ['tags removed', 'Keeps <b>etcd</b> running.', 'Keeps etcd running.'],
    ['empty', '', ''],
  ])('%s', (_, input, expected) => {
    expect(firstParagraph(input)).toBe(expected);
  });

  it('cuts a long paragraph with an ellipsis', () => {
    const out = firstParagraph('word '.repeat(200), 50);
    expect(out.length).toBeLessThanOrEqual(50);
    expect(out.endsWith('…')).toBe(true);
  });
});
