/** Manager defaults, apart from the manager so the CLI can show them without loading it. */

/** Catalogs in this namespace are visible from every namespace (OLM's `olm`). */
export const DefaultGlobalNamespace = 'olm';
export const DefaultMetricsAddress = '127.0.0.1:8080';

/**
 * The allocator setting `npm start` runs the manager with (glibc reads it only at process start,
 * so it is set where the process is started). By default glibc raises its mmap threshold each
 * time a large block is freed (an HTTP body, an icon, a catalog file): later blocks of up to that
 * size then come from the heap, whose freed pages it keeps. Fixed at its initial 128 KiB, blocks
 * that large are mapped and unmapped, and a manager serving the corpus catalog holds about 40 MiB
 * less (`npm run bench -- browse`). Other allocators ignore it.
 */
export const ManagerAllocatorEnv = { MALLOC_MMAP_THRESHOLD_: '131072' } as const;
