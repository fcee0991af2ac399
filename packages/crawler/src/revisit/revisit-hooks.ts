import { contentSignature } from '@crawlq/extractor';
import type { FetchResult } from '@crawlq/fetcher';
import type { KnownUrl, RevisitSchedule } from '@crawlq/frontier';
import type { CrawlqConfig } from '@crawlq/config';
import { headerHintMs, isHub, nextSchedule, revisitPolicyOf, type RevisitPolicy } from './revisit-interval.js';

/** 404/410 answers in a row after which a URL is retired (never due again). */
export const RETIRE_AFTER_MISSES = 3;
/**
 * A URL is not fetched again while this much of its interval is left: a
 * copy of it handed to the backlog twice (its lease ran out while it waited)
 * is dropped. The slack covers the schedule's 100 ms time steps.
 */
const EARLY_SLACK_MS = 1_000;

/** How a fetch went for the schedule. */
export type RevisitOutcome = 'first' | 'changed' | 'unchanged' | 'notModified' | 'gone';

/** A fetch of a URL under a revisit policy: the validators to send, then how to judge and record the answer. */
export interface RevisitTicket {
  /** If-None-Match / If-Modified-Since from the last full fetch (empty on a first fetch). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Judges the response against the stored state (304, or the same content
   * signature: unchanged). `commit` stores the outcome and schedules the next
   * fetch; call it after the page's record is written, so a worker that dies
   * in between fetches the page again rather than losing its new version.
   */
  judge(response: FetchResult, now?: number): RevisitVerdict;
}

/** How a fetch compares with the URL's last one, and how to store it. */
export interface RevisitVerdict {
  readonly outcome: RevisitOutcome;
  /** The page's content signature (the stored one for a 304): the sinks tell a new version from a redelivery by it. */
  readonly signature: string;
  /** What the last fetch that archived the page kept of its response (see RevisitRecord.archived); undefined: none. */
  readonly archived: Buffer | undefined;
  /** This answer retires the URL (its last 404/410s in a row): it is never due again once committed. */
  readonly retires: boolean;
  /**
   * Stores the outcome and schedules the next fetch. `archived`: this fetch
   * archived a new response. `links`: the hash of the link set the page's
   * route followed (see linkSetHash), when it parsed the page; compared with
   * the one kept at the page's last change, it tells a hub.
   */
  commit(options?: { readonly archived?: Uint8Array | undefined; readonly links?: number | undefined }): Promise<void>;
}

/** What the crawl job asks of the revisit schedule. */
export interface RevisitHooks {
  /** undefined: the URL's group has no revisit policy (a one-shot crawl costs nothing more); 'not-due': fetched within its interval, skip. */
  begin(request: { readonly url: string; readonly group: string; readonly depth: number }, now?: number): Promise<RevisitTicket | 'not-due' | undefined>;
}

/**
 * The revisit hooks of a worker. `config` is read on every fetch, so a
 * `config set` of the policy applies to the next fetch of every URL.
 */
export function createRevisitHooks(options: { readonly schedule: () => RevisitSchedule; readonly config: () => CrawlqConfig }): RevisitHooks {
  return {
    async begin({ url, group, depth }, now = Date.now()) {
      const config = options.config();
      const policy = revisitPolicyOf(config, group);
      if (policy.mode === 'off') return undefined;
      const known = await options.schedule().known(url);
      const { state } = known;
      // A leased URL was taken off the schedule as due: this is its copy. Otherwise one fetched within its interval is a second copy.
      if (state !== undefined && !state.leased && now + EARLY_SLACK_MS < state.fetchedAt + state.intervalMs) return 'not-due';
      return ticket({ known, policy, depth, ignore: config.revisitIgnore });
    },
  };
}

function ticket({ known, policy, depth, ignore }: { known: KnownUrl; policy: RevisitPolicy; depth: number; ignore: string | undefined }): RevisitTicket {
  const { state, priorMs } = known;
  const headers: Record<string, string> = {};
  if (state?.etag !== undefined) headers['if-none-match'] = state.etag;
  if (state?.lastModified !== undefined) headers['if-modified-since'] = new Date(state.lastModified).toUTCString();
  return {
    headers,
    judge(response, now = Date.now()) {
      const status = response.status;
      const gone = status === 404 || status === 410;
      const misses = gone ? (state?.misses ?? 0) + 1 : 0;
      const notModified = status === 304 && state !== undefined;
      // A 304 keeps the stored signature and validators; anything else is judged by what it says.
      const signature = notModified ? state.signature : contentSignature(response.body, response.contentType, ignore);
      const outcome: RevisitOutcome = gone ? 'gone' : state === undefined ? 'first' : notModified ? 'notModified' : signature === state.signature ? 'unchanged' : 'changed';
      const changed = outcome === 'first' || outcome === 'changed';
      const hasHistory = state !== undefined && state.estimate.changes > 0;
      const hintMs = headerHintMs(response.headers, now);
      const etag = notModified ? state.etag : headerText(response.headers.etag);
      const lastModifiedText = headerText(response.headers['last-modified']);
      const lastModified = notModified ? state.lastModified : lastModifiedText === undefined ? undefined : Date.parse(lastModifiedText) || undefined;
      const retires = gone && misses >= RETIRE_AFTER_MISSES;
      return {
        outcome,
        signature,
        archived: state?.archived,
        retires,
        commit: (options) => {
          // A change brings the link set its parse found (none: the page keeps none); anything else keeps the stored one.
          const links = changed ? options?.links : state?.links;
          const hub = isHub({ changed: outcome === 'changed', before: state?.links, after: options?.links, wasHub: state?.hub ?? false });
          const { intervalMs, history } = nextSchedule({
            policy,
            previousMs: state?.intervalMs,
            history: hasHistory ? state.estimate : undefined,
            elapsedMs: state === undefined ? undefined : now - state.fetchedAt,
            changed,
            linksChanged: hub,
            hintMs,
            priorMs,
          });
          return known.record({
            ...(options?.archived === undefined ? {} : { archived: options.archived }),
            now,
            intervalMs,
            ...(history === undefined ? {} : { estimate: history }),
            links,
            hub,
            changed,
            signature,
            lastModified,
            etag,
            misses,
            depth,
            retire: retires,
            outcome,
            bytesSaved: notModified ? state.bodyBytes : 0,
            bodyBytes: notModified ? state.bodyBytes : response.bodyBytes,
          });
        },
      };
    },
  };
}

function headerText(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text === '' ? undefined : text;
}
