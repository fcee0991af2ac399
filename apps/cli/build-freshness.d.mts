/** The built CLI entry (apps/cli/dist/main.js). */
export declare const BUILT_ENTRY: string;
/** `crawlq worker` bundled into one file (apps/cli/dist/crawlq-worker.js). */
export declare const WORKER_BUNDLE: string;
/** When the last complete `pnpm build` started (apps/cli/.build-started, outside turbo's cached dist/). */
export declare const STAMP: string;
/** The TypeScript entry (apps/cli/src/main.ts). */
export declare const SOURCE_ENTRY: string;
/** The built file that runs `crawlq <args>`: the bundled worker for `worker`, the built CLI otherwise. */
export declare function builtEntryFor(args: readonly string[]): string;
/** Why the build cannot be trusted, or undefined when every package the CLI loads was built after its last change. */
export declare function staleReason(): string | undefined;
