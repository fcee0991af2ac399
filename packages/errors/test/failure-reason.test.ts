import { describe, expect, it } from 'vitest';
import {
  FAILURE_REASONS,
  failureReasonInMessage,
  failureReasonOfCode,
  httpFailureReason,
  isFailureReason,
  messageWithReason,
  statusOfFailureReason,
} from '@crawlq/errors';

describe('failure reasons', () => {
  it('knows the named reasons and http-NNN, nothing else', () => {
    for (const reason of FAILURE_REASONS) expect(isFailureReason(reason)).toBe(true);
    expect(isFailureReason(httpFailureReason(503))).toBe(true);
    expect(['http-999', 'http-50', 'Timeout', 'permanent', '', 42, undefined].some(isFailureReason)).toBe(false);
    expect(statusOfFailureReason('http-429')).toBe(429);
    expect(statusOfFailureReason('timeout')).toBeNull();
  });

  it('maps Node.js, undici and zlib codes', () => {
    expect(failureReasonOfCode('ETIMEDOUT')).toBe('timeout');
    expect(failureReasonOfCode('UND_ERR_HEADERS_TIMEOUT')).toBe('timeout');
    expect(failureReasonOfCode('ECONNREFUSED')).toBe('network');
    expect(failureReasonOfCode('Z_DATA_ERROR')).toBe('decompression');
    expect(failureReasonOfCode('ERR_INVALID_STATUS')).toBe('invalid-status');
    expect(failureReasonOfCode('ERR_INVALID_URL')).toBe('invalid-url');
    expect(failureReasonOfCode('ERR_HTTP_STATUS')).toBeUndefined();
    expect(failureReasonOfCode(undefined)).toBeUndefined();
  });

  it('puts the reason at the start of a message and reads it back', () => {
    const message = messageWithReason('blocked-group', 'group a.test has been waiting 60 s');
    expect(message).toBe('blocked-group: group a.test has been waiting 60 s');
    expect(failureReasonInMessage(message)).toBe('blocked-group');
    expect(failureReasonInMessage(messageWithReason('http-503', 'Fetching x failed'))).toBe('http-503');
  });

  it('reads no reason from messages that only look like it', () => {
    expect(failureReasonInMessage('Fetching https://x.test/ failed after 2 retries: HTTP 502')).toBeUndefined();
    expect(failureReasonInMessage('PermanentFetchError: refused (ssrf)')).toBeUndefined();
    expect(failureReasonInMessage('cache: miss')).toBeUndefined();
    // Says nothing, and foreign messages start that way: the fallback reads the rest.
    expect(failureReasonInMessage('error: connect ETIMEDOUT')).toBeUndefined();
  });
});
