/**
 * Paths inside image layers, checked and normalised before anything is made of them. Pure: the
 * rules an extraction applies, testable on their own.
 */

/** Why a tar entry's path is refused, or its normal form: no `./`, no trailing or doubled `/`. */
export function normalizeEntryPath(raw: string): { ok: true; path: string } | { ok: false; why: string } {
  if (raw.includes('\0')) return { ok: false, why: 'its path contains a NUL byte' };
  if (raw.startsWith('/') || /^[A-Za-z]:[\\/]/.test(raw)) return { ok: false, why: 'its path is absolute' };
  // A backslash is a separator to Windows tools and a name character to Linux: either reading
  // could be meant, so neither is guessed.
  if (raw.includes('\\')) return { ok: false, why: 'its path contains a backslash' };
  const parts = raw.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) return { ok: false, why: 'its path leaves the image root with ".."' };
  if (parts.length === 0) return { ok: true, path: '' };
  return { ok: true, path: parts.join('/') };
}

/**
 * Where a symlink at `linkPath` pointing at `target` leads, as a path from the image root, read
 * lexically (`..` steps back over the name before it, an absolute target starts at the image
 * root, as it does inside a container); undefined when it leads out of the root.
 */
export function linkDestination(linkPath: string, target: string): string | undefined {
  if (target === '' || target.includes('\0')) return undefined;
  const start = target.startsWith('/') ? [] : linkPath.split('/').slice(0, -1);
  const at = [...start];
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (at.length === 0) return undefined;
      at.pop();
    } else at.push(part);
  }
  return at.join('/');
}

/**
 * The target to write for a symlink at `linkPath` leading to `destination` (from
 * linkDestination): up to the root through the link's own folders, which extraction made as real
 * folders, then down. A link written this way cannot lead out of the root however the names
 * below it turn out: going up passes only real folders, and going down through another link
 * follows a target of the same form. Written as the image gave it, `a/../..` could climb out
 * once `a` is itself a link.
 */
export function canonicalLinkTarget(linkPath: string, destination: string): string {
  const depth = linkPath.split('/').length - 1;
  const up = Array.from({ length: depth }, () => '..');
  const parts = [...up, ...(destination === '' ? [] : destination.split('/'))];
  return parts.length === 0 ? '.' : parts.join('/');
}

export const WhiteoutPrefix = '.wh.';
export const OpaqueWhiteout = '.wh..wh..opq';

/** What a layer entry's name means for the layers below it (OCI image spec, "Whiteouts"). */
export function whiteoutOf(
  path: string,
):
  | { kind: 'none' }
  | { kind: 'opaque'; dir: string }
  | { kind: 'remove'; path: string }
  | { kind: 'meta' }
  | { kind: 'invalid' } {
  const slash = path.lastIndexOf('/');
  const dir = slash === -1 ? '' : path.slice(0, slash);
  const base = path.slice(slash + 1);
  if (!base.startsWith(WhiteoutPrefix)) return { kind: 'none' };
  if (base === OpaqueWhiteout) return { kind: 'opaque', dir };
  // Other `.wh..wh.` names are aufs's own bookkeeping (hard-link folders), never content.
  if (base.startsWith(`${WhiteoutPrefix}${WhiteoutPrefix}`)) return { kind: 'meta' };
  const name = base.slice(WhiteoutPrefix.length);
  if (name === '' || name === '.' || name === '..') return { kind: 'invalid' };
  return { kind: 'remove', path: dir === '' ? name : `${dir}/${name}` };
}
