// The library entry of the public `crawlq` package: a hand-picked list of what
// users may import. Everything here is bundled from the workspace packages by
// build.mjs, its types into one dist/index.d.ts; the workspace packages
// themselves are never installed.
export type { PageRecord, SkippedRecord } from '@crawlq/crawler';
