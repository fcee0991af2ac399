/**
 * Why a crawl job failed, as dead letters, metrics and alerts name it. One
 * list for every package that throws and the dead letters that read it,
 * so a reason is data the thrower sets, not wording a reader guesses
 * from. It lives here, beside the error base, because every package that
 * throws may import @crawlq/errors (it imports nothing); @crawlq/urls
 * re-exports it under the same names.
 */
export const FAILURE_REASONS = [
  // The fetch may heal (after the job's retries): no answer in time, a
  // connection or TLS failure, a body that did not inflate, a status line
  // without a status.
  'timeout',
  'network',
  'decompression',
  'invalid-status',
  // The fetch can never succeed as asked.
  'scheme',
  'ssrf',
  'body-too-large',
  'too-many-redirects',
  'invalid-url',
  // Politeness gave up: robots.txt, or the group, stayed unavailable too long.
  'robots',
  'robots-unreachable',
  'blocked-group',
  // The page was fetched but its records could not be written to the --warc
  // archive (a full disk, a read-only directory): no retry, as no retry heals
  // that without an operator, and each would fetch the page again.
  'warc',
  // The URL was in hand when its workers died or hung (lock expired) more often than allowed.
  'stalled',
  // The user's crawler code (a route or hook of --crawler) threw, and gave no reason of its own.
  'handler',
  // Nothing more specific is known.
  'error',
] as const;

export type NamedFailureReason = (typeof FAILURE_REASONS)[number];

/** A named reason, or `http-NNN` for a response whose status failed the fetch. */
export type FailureReason = NamedFailureReason | `http-${number}`;

const NAMED = new Set<string>(FAILURE_REASONS);
const HTTP_REASON = /^http-([1-5]\d\d)$/;

/** The reason of a failing HTTP status: `http-503`. */
export function httpFailureReason(status: number): FailureReason {
  return `http-${status}`;
}

export function isFailureReason(value: unknown): value is FailureReason {
  return typeof value === 'string' && (NAMED.has(value) || HTTP_REASON.test(value));
}

/** The status an `http-NNN` reason names, else null. */
export function statusOfFailureReason(reason: FailureReason): number | null {
  const digits = HTTP_REASON.exec(reason)?.[1];
  return digits === undefined ? null : Number(digits);
}

const TIMEOUT_CODES = new Set([
  'ETIMEDOUT', 'ESOCKETTIMEDOUT', 'ETIMEOUT', 'ECONNABORTED',
  'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT',
]);
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN',
  'ENETDOWN', 'EPIPE', 'EPROTO', 'ERR_STREAM_PREMATURE_CLOSE', 'UND_ERR_SOCKET', 'ERR_SSL_WRONG_VERSION_NUMBER',
  'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * The reason a Node.js, undici or zlib error code stands for (`ETIMEDOUT` →
 * `timeout`, `ECONNRESET` → `network`, `Z_DATA_ERROR` → `decompression`), or
 * undefined for a code that says nothing about the failure.
 */
export function failureReasonOfCode(code: string | undefined): FailureReason | undefined {
  if (code === undefined) return undefined;
  if (TIMEOUT_CODES.has(code)) return 'timeout';
  if (NETWORK_CODES.has(code)) return 'network';
  if (code === 'ERR_INVALID_URL') return 'invalid-url';
  // The fetcher's code for a `000` status line; zlib's codes for a body that does not inflate.
  if (code === 'ERR_INVALID_STATUS') return 'invalid-status';
  if (code.startsWith('Z_')) return 'decompression';
  return undefined;
}

/**
 * `reason: message`: how a failure's reason rides in its message. BullMQ
 * keeps only the message (`failedReason`) of a failed job, and a job whose
 * worker died before recording it has nothing else to be classified by.
 */
export function messageWithReason(reason: FailureReason, message: string): string {
  return `${reason}: ${message}`;
}

/**
 * The reason {@link messageWithReason} put at the start of `message`, if any.
 * A leading `error: ` is not taken for one: it says nothing, and foreign
 * messages start that way.
 */
export function failureReasonInMessage(message: string): FailureReason | undefined {
  const reason = /^([a-z][a-z0-9-]*): /.exec(message.trimStart())?.[1];
  return reason !== 'error' && isFailureReason(reason) ? reason : undefined;
}
