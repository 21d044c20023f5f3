/** Manager defaults, apart from the manager so the CLI can show them without loading it. */

/** Catalogs in this namespace are visible from every namespace (OLM's `olm`). */
export const DefaultGlobalNamespace = 'olm';
export const DefaultMetricsAddress = '127.0.0.1:8080';

/** The allocator setting the manager runs with (src/cli/allocator.ts says why and how). */
export const ManagerAllocatorEnv = { MALLOC_MMAP_THRESHOLD_: '131072' } as const;

/** V8's young generation for the manager, 2 × 2 MiB semi-spaces (src/cli/allocator.ts says why and how). */
export const ManagerHeapFlags = ['--max-semi-space-size=2'] as const;

/** The name of the leader election Lease (`bosun operator run --leader-elect`). */
export const DefaultLeaderElectionId = 'bosun-manager';
