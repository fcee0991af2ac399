import { failureReasonInMessage, failureReasonOfCode, isFailureReason, statusOfFailureReason } from '@crawlq/errors';
import { redactText } from '@crawlq/urls';

/** What a failure was, in the fields a dead-letter entry keeps. */
export interface FailureClassification {
  /**
   * Short machine-friendly reason: one of `FAILURE_REASONS` from @crawlq/urls
   * (`timeout`, `network`, `ssrf`, `blocked-group`, ...) or `http-NNN`; a
   * foreign error's own `reason` field, kebab-cased, when it has one.
   */
  readonly reason: string;
  /** HTTP status of the last response, when there was one. */
  readonly status: number | null;
  /** The most specific error class name found (`RetryableFetchError`, `TimeoutError`, ...). */
  readonly errorClass: string;
  /** The error message, credentials removed, at most {@link MAX_MESSAGE_LENGTH} characters. */
  readonly message: string;
  /**
   * Only for a failure of the user's crawler code (--crawler): the stack of
   * what it threw, credentials removed, at most {@link MAX_STACK_LENGTH} characters.
   */
  readonly stack?: string;
}

/** A handler's stack is cut here: its first frames say where. */
export const MAX_STACK_LENGTH = 4000;

/** Longer messages are cut: an entry is ~1 KB of Redis memory, not a log file. */
export const MAX_MESSAGE_LENGTH = 1000;

/** Wrappers that say nothing about the failure itself; look past them for a class name. */
const GENERIC_NAMES = new Set(['Error', 'UnrecoverableError']);

interface Facts {
  /** A crawlq error's `failureReason`: the thrower's own word, checked against the shared list. */
  failureReason?: string;
  reason?: string;
  status?: number;
  code?: string;
  handlerStack?: string;
  names: string[];
}

/**
 * Reads a thrown value into dead-letter fields. crawlq's own errors say their
 * reason as data: a `failureReason` from the shared list (@crawlq/urls), the
 * first one along the `cause` chain. Foreign errors fall back to structured
 * fields (`reason`, then `status` / `statusCode` / `response.statusCode`, then
 * `code`, then `name`), then to the message (see {@link classifyFailureMessage}).
 * URLs in the message lose their userinfo and secret query values.
 */
export function classifyFailure(error: unknown): FailureClassification {
  const facts: Facts = { names: [] };
  let message: string | undefined;
  let current: unknown = error;
  // Bounded walk: cause chains are short, and a cycle must not hang us.
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (typeof current !== 'object') {
      if (typeof current === 'string') message ??= current;
      else if (typeof current === 'number' || typeof current === 'boolean' || typeof current === 'bigint') message ??= String(current);
      else message ??= `a ${typeof current} was thrown`;
      break;
    }
    const record = current as Record<string, unknown>;
    facts.failureReason ??= isFailureReason(record.failureReason) ? record.failureReason : undefined;
    facts.reason ??= reasonField(record.reason);
    facts.status ??= statusField(record.status) ?? statusField(record.statusCode) ?? responseStatus(record.response);
    facts.code ??= typeof record.code === 'string' ? record.code : undefined;
    facts.handlerStack ??= typeof record.handlerStack === 'string' ? record.handlerStack : undefined;
    const name = typeof record.name === 'string' ? record.name : current.constructor?.name;
    if (name) facts.names.push(name);
    if (message === undefined && typeof record.message === 'string' && record.message !== '') message = record.message;
    current = record.cause;
  }
  const text = message ?? (error === undefined ? 'unknown error' : 'error without a message');
  const fromText = classifyFailureMessage(text);
  const specificName = facts.names.find((name) => !GENERIC_NAMES.has(name));
  const status = facts.status ?? fromText.status;
  return {
    reason:
      facts.failureReason ??
      facts.reason ??
      (facts.status === undefined ? undefined : `http-${facts.status}`) ??
      failureReasonOfCode(facts.code) ??
      reasonFromNames(facts.names) ??
      fromText.reason,
    status,
    errorClass: specificName ?? (fromText.errorClass !== 'Error' ? fromText.errorClass : undefined) ?? facts.names[0] ?? 'Error',
    message: fromText.message,
    ...(facts.handlerStack === undefined ? {} : { stack: redactText(facts.handlerStack).slice(0, MAX_STACK_LENGTH) }),
  };
}

/**
 * Classifies a failure from its message alone, and optionally the stack BullMQ
 * kept (`job.stacktrace`): what `reconcile()` has for a job whose worker died
 * before recording it. crawlq's errors start the message with their reason
 * (`timeout: ...`, see `messageWithReason` in @crawlq/urls); other messages are
 * read by the patterns below, a fallback for foreign errors and for failures
 * recorded before reasons were data.
 */
export function classifyFailureMessage(message: string, stack?: string | null): FailureClassification {
  const clean = truncate(redactText(message.trim() || 'error without a message'));
  const stated = failureReasonInMessage(clean);
  const status = (stated === undefined ? null : statusOfFailureReason(stated)) ?? statusFromText(clean);
  const errorClass =
    /^([A-Z][\w$]*(?:Error|Exception|Violation)):\s/.exec(clean)?.[1] ?? /^([A-Z][\w$]*)(?:\s\[[\w-]+\])?:\s/.exec(stack ?? '')?.[1] ?? 'Error';
  return { reason: stated ?? reasonFromText(clean, status), status, errorClass, message: clean };
}

/** The fallback: crawlq's older wordings and foreign errors' messages. */
function reasonFromText(text: string, status: number | null): string {
  const refused = /refused \(([a-z][a-z-]*)\)/i.exec(text)?.[1];
  if (refused) return refused.toLowerCase();
  if (/past --max-blocked|group \S+ has been paused/i.test(text)) return 'blocked-group';
  if (/\brobots-unreachable\b|\brobots\.txt \S+ unreachable\b/i.test(text)) return 'robots-unreachable';
  if (/\brobots(?:\.txt)?\b/i.test(text)) return 'robots';
  if (/\bssrf\b/i.test(text)) return 'ssrf';
  if (/body[- ]too[- ]large|body (?:is )?(?:over|exceeds)/i.test(text)) return 'body-too-large';
  if (/invalid url|ERR_INVALID_URL/i.test(text)) return 'invalid-url';
  if (status !== null) return `http-${status}`;
  if (/stalled more than allowable limit/i.test(text)) return 'stalled';
  if (/\bE?TIMEDOUT\b|ESOCKETTIMEDOUT|timed? ?out\b|\btimeout\b/i.test(text)) return 'timeout';
  const code = /\b(E[A-Z]{3,}|UND_ERR_[A-Z_]+|ERR_[A-Z_]+|Z_[A-Z_]+)\b/.exec(text)?.[1];
  return failureReasonOfCode(code) ?? (/socket hang up/i.test(text) ? 'network' : 'error');
}

function statusFromText(text: string): number | null {
  // `ECONNRESET (reading an HTTP 200 response)`: the status of a response whose
  // body failed, not the failure.
  const match = /(?<!\breading an )\bHTTP[ /]?(?:\d\.\d )?([1-5]\d\d)\b|\bresponse code ([1-5]\d\d)\b|\bstatus(?: code)?[ :=]+([1-5]\d\d)\b/i.exec(text);
  const digits = match?.[1] ?? match?.[2] ?? match?.[3];
  return digits === undefined ? null : Number(digits);
}

/** got's error classes, for errors thrown by got itself rather than through the fetcher. */
function reasonFromNames(names: readonly string[]): string | undefined {
  if (names.includes('TimeoutError')) return 'timeout';
  if (names.some((name) => name === 'RequestError' || name === 'ReadError')) return 'network';
  return undefined;
}

function reasonField(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  // Machine-friendly: lower-case kebab, short; anything else is not a reason code.
  const normalised = value.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 40);
  return normalised === '' ? undefined : normalised;
}

function statusField(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 599 ? value : undefined;
}

function responseStatus(value: unknown): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const response = value as Record<string, unknown>;
  return statusField(response.statusCode) ?? statusField(response.status);
}

function truncate(text: string): string {
  return text.length <= MAX_MESSAGE_LENGTH ? text : `${text.slice(0, MAX_MESSAGE_LENGTH - 1)}…`;
}
