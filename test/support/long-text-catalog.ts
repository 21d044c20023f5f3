/**
 * A valid catalog whose names and descriptions are as long as a catalog can make them, without a
 * space to break a line at: a 50,000-character provider, a 1 MB display name, long keywords,
 * categories, capability and description, channel names of 5,000 characters, and a package name
 * of 63 (the longest a package may have). The web catalog must keep each inside its card and its
 * package page, and stay usable.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The packages and what is long in each, by package name. */
export const LongText = {
  provider: 'long-provider',
  displayName: 'long-display-name',
  keywords: 'long-keywords',
  channels: 'long-channels',
  name: 'n'.repeat(63),
} as const;

const word = (letter: string, n: number) => letter.repeat(n);

interface Metadata {
  displayName?: string;
  provider?: { name: string; url?: string };
  keywords?: string[];
  description?: string;
  annotations?: Record<string, string>;
  maintainers?: { name: string; email?: string }[];
  links?: { name: string; url: string }[];
}

function packageDocs(name: string, channels: string[], meta: Metadata): object[] {
  const bundle = `${name}.v1.0.0`;
  return [
    { schema: 'olm.package', name, defaultChannel: channels[0] },
    ...channels.map((c) => ({ schema: 'olm.channel', package: name, name: c, entries: [{ name: bundle }] })),
    {
      schema: 'olm.bundle',
      name: bundle,
      package: name,
      image: `quay.io/example/${name.slice(0, 40)}:v1.0.0`,
      properties: [
        { type: 'olm.package', value: { packageName: name, version: '1.0.0' } },
        {
          type: 'olm.csv.metadata',
          value: {
            installModes: [{ type: 'AllNamespaces', supported: true }],
            ...meta,
          },
        },
      ],
    },
  ];
}

/** Writes the catalog (one JSON file per package) into `dir`. */
export async function writeLongTextCatalog(dir: string): Promise<void> {
  const packages: [string, string[], Metadata][] = [
    [LongText.provider, ['stable'], { displayName: 'Long provider', provider: { name: word('W', 50_000) } }],
    [LongText.displayName, ['stable'], { displayName: word('M', 1_000_000), provider: { name: 'Example' } }],
    [
      LongText.keywords,
      ['stable'],
      {
        displayName: 'Long keywords',
        provider: { name: 'Example', url: `https://example.com/${word('u', 5_000)}` },
        keywords: [word('k', 20_000), word('q', 20_000)],
        description: word('d', 100_000),
        annotations: {
          categories: word('c', 10_000),
          capabilities: word('l', 10_000),
          containerImage: `quay.io/example/${word('i', 5_000)}:v1`,
        },
        maintainers: [{ name: word('m', 10_000), email: `${word('e', 5_000)}@example.com` }],
        links: [{ name: word('L', 10_000), url: 'https://example.com/' }],
      },
    ],
    [
      LongText.channels,
      [word('s', 5_000), word('f', 5_000)],
      { displayName: 'Long channels', provider: { name: 'Example' } },
    ],
    [LongText.name, ['stable'], { provider: { name: 'Example' } }],
    // Ordinary neighbours, which the long ones must not paint over.
    ...['alpha', 'beta', 'gamma'].map((n): [string, string[], Metadata] => [
      `plain-${n}`,
      ['stable'],
      { displayName: `Plain ${n}`, provider: { name: 'Example' }, description: `The ${n} operator.` },
    ]),
  ];
  for (const [name, channels, meta] of packages) {
    await mkdir(join(dir, name), { recursive: true });
    const docs = packageDocs(name, channels, meta);
    await writeFile(join(dir, name, 'catalog.json'), `${docs.map((d) => JSON.stringify(d)).join('\n')}\n`);
  }
}
