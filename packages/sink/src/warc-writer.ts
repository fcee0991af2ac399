import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { accessSync, constants, mkdirSync } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import type * as Warcio from 'warcio';
import { WarcDirectoryError, WarcWriteError } from './errors.js';
import { hostLabel, OPEN_SUFFIX, warcFileName, warcWriterId } from './warc-file-name.js';
import { WARC_LEASE_FENCE_MS, WARC_LEASE_RENEW_MS, WARC_LEASE_TTL_MS, type WarcWriterLease } from './warc-lease.js';

type HeaderLine = readonly [name: string, value: string];

/** One fetched page as it crossed the wire (the fetcher's raw exchange). */
export interface ArchivedExchange {
  /** The URL of the final request (after redirects). */
  readonly url: string;
  /** When the request went out. */
  readonly requestedAt: Date;
  readonly request: { readonly method: string; readonly target: string; readonly headers: readonly HeaderLine[] };
  readonly response: {
    readonly httpVersion: string;
    readonly status: number;
    readonly statusText: string;
    readonly headers: readonly HeaderLine[];
    /** Body bytes as received, before content decoding. */
    readonly body: Uint8Array;
  };
  /**
   * The page as a browser rendered it (the DOM after its scripts ran): written
   * as a `conversion` record that refers to the response it was made from.
   */
  readonly rendered?: { readonly body: Uint8Array; readonly contentType: string };
  /**
   * The record's WARC-Record-ID (`<urn:uuid:...>`), chosen by the caller so it
   * can keep it for a later revisit record (see {@link WarcCapture}); absent: a new one.
   */
  readonly recordId?: string;
  /**
   * Written as a `revisit` record instead of a `response` one: the response's
   * status line and headers without its body, referring to the capture whose
   * payload it repeats (see {@link WarcRevisit}).
   */
  readonly revisit?: WarcRevisit;
}

/** What a later revisit record names of a page's response record (WARC 1.1 section 5.11-5.12). */
export interface WarcCapture {
  /** `<urn:uuid:...>`: written as WARC-Refers-To. */
  readonly recordId: string;
  /** Its WARC-Date (ISO 8601 with milliseconds): written as WARC-Refers-To-Date. */
  readonly date: string;
  /** Its WARC-Target-URI: written as WARC-Refers-To-Target-URI. */
  readonly targetUri: string;
  /** Its WARC-Payload-Digest (`sha256:` and hex, as {@link warcPayloadDigest} gives). */
  readonly payloadDigest: string;
}

/**
 * Why a fetch is archived as a revisit: the server answered 304
 * (`server-not-modified`; the capture may be unknown, then the record names
 * none), or the payload's digest equals the capture's (`identical-payload-digest`).
 */
export type WarcRevisit =
  | { readonly profile: 'server-not-modified'; readonly refersTo: WarcCapture | undefined }
  | { readonly profile: 'identical-payload-digest'; readonly refersTo: WarcCapture };

/** The WARC/1.1 revisit profiles (section 6.7.2-6.7.3). */
export const WARC_REVISIT_PROFILES = {
  'server-not-modified': 'http://netpreserve.org/warc/1.1/revisit/server-not-modified',
  'identical-payload-digest': 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest',
} as const;

/** A payload's digest as the writer records it in WARC-Payload-Digest: SHA-256 of the body bytes as received, in hex. */
export function warcPayloadDigest(body: Uint8Array): string {
  return `sha256:${createHash('sha256').update(body).digest('hex')}`;
}

/** What a revisit record would name of the response record `exchange` is written as (its `recordId` set). */
export function warcCaptureOf(exchange: Pick<ArchivedExchange, 'url' | 'requestedAt' | 'response'> & { readonly recordId: string }): WarcCapture {
  return { recordId: exchange.recordId, date: exchange.requestedAt.toISOString(), targetUri: warcTargetUri(exchange.url), payloadDigest: warcPayloadDigest(exchange.response.body) };
}

/** WARC-Target-URI as warcio writes it: the URL parsed and serialised again. */
function warcTargetUri(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

/** A new WARC-Record-ID. */
export function newWarcRecordId(): string {
  return `<urn:uuid:${randomUUID()}>`;
}

/** Where a page's records landed: enough to find them again without an index. */
export interface WarcLocation {
  /** File name (no directory), as it is once the file is closed. */
  readonly file: string;
  /** Byte offset of the response record's gzip member. */
  readonly offset: number;
  /** Bytes of the response and request records together (and the rendered page's conversion record, when there is one). */
  readonly length: number;
}

export interface WarcWriterOptions {
  readonly dir: string;
  /** A file is closed and the next one started before a write would pass this size. */
  readonly maxFileBytes: number;
  /** First part of every file name (the crawl's namespace). */
  readonly prefix: string;
  /** Written into each file's warcinfo record. */
  readonly software: string;
  /**
   * Where this writer holds its lease while it has a file open, so that
   * another worker's recovery (see `recoverWarcFiles`) never takes a file it
   * still writes. Absent: no lease is held, and such a recovery would take the
   * writer's open files for a stopped writer's.
   */
  readonly lease?: WarcWriterLease;
}

/** Writes WARC 1.1 files for one process: one gzip member per record, rotated by size. */
export interface WarcWriter {
  /** `HOST-PID-RANDOM`: the tail of this writer's file names, and the name of its lease. */
  readonly id: string;
  /**
   * Appends a page's records. A failed write (a full disk, say) cuts the file
   * back to its last whole record, closes it and rejects with a
   * {@link WarcWriteError}; the next page starts a new file.
   */
  write(exchange: ArchivedExchange): Promise<WarcLocation>;
  /** Closes the current file (dropping its `.open` suffix) and ends the lease. */
  close(): Promise<void>;
}

const WARC_VERSION = 'WARC/1.1';

let warcio: Promise<typeof Warcio> | undefined;
/** warcio is loaded with the first record: only `--warc` crawls need it, and workers start faster without it. */
const loadWarcio = (): Promise<typeof Warcio> => (warcio ??= import('warcio'));

interface OpenFile {
  readonly handle: FileHandle;
  readonly name: string;
  /** Bytes of whole records: where the next page goes, and where a failed write is cut back to. */
  size: number;
  pages: number;
}

/**
 * One writer per worker process. File names are unique across machines and
 * restarts: prefix, open time, serial, host, pid and a random token (two
 * containers can share a host name and pid 1). A file being written ends in
 * `.open` and is renamed when closed, the convention Heritrix uses, so a
 * reader knows which files are complete. A killed worker leaves `.open` files;
 * the next worker to start recovers them (`recoverWarcFiles`).
 */
export function openWarcWriter(options: WarcWriterOptions): WarcWriter {
  const dir = resolve(options.dir);
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (error) {
    throw new WarcDirectoryError(dir, error);
  }
  const id = warcWriterId(hostLabel(), process.pid, randomBytes(3).toString('hex'));
  const { lease } = options;
  let serial = 0;
  let current: OpenFile | undefined;
  // Writes are chained: each page's records are appended whole, in order.
  let queue: Promise<unknown> = Promise.resolve();
  // When (performance.now()) the last renewal that the store took was sent.
  let leaseSentAt = Number.NEGATIVE_INFINITY;
  let heartbeat: NodeJS.Timeout | undefined;

  const renewLease = async () => {
    if (!lease) return;
    const sentAt = performance.now();
    await lease.hold(id, WARC_LEASE_TTL_MS);
    leaseSentAt = Math.max(leaseSentAt, sentAt);
  };
  const leaseFresh = () => !lease || performance.now() - leaseSentAt < WARC_LEASE_FENCE_MS;

  const startFile = async (): Promise<OpenFile> => {
    // The lease first: from the moment the file exists, no recovery may take it.
    if (!leaseFresh()) await renewLease();
    heartbeat ??= setInterval(() => void renewLease().catch(() => undefined), WARC_LEASE_RENEW_MS).unref();
    const name = warcFileName({ prefix: options.prefix, openedAt: new Date(), serial, writer: id });
    serial += 1;
    const path = join(dir, `${name}${OPEN_SUFFIX}`);
    const { WARCRecord, WARCSerializer } = await loadWarcio();
    const info = WARCRecord.createWARCInfo(
      { filename: name, warcVersion: WARC_VERSION },
      { software: options.software, format: 'WARC File Format 1.1', conformsTo: 'https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/', hostname: hostname(), isPartOf: options.prefix },
    );
    const bytes = await WARCSerializer.serialize(info, { gzip: true });
    let handle: FileHandle;
    try {
      handle = await open(path, 'wx');
    } catch (error) {
      throw new WarcWriteError(path, error);
    }
    try {
      await writeAll(handle, bytes, 0);
    } catch (error) {
      // No record points into a file without its warcinfo: it goes.
      await handle.close().catch(() => undefined);
      await unlink(path).catch(() => undefined);
      throw new WarcWriteError(path, error);
    }
    current = { handle, name, size: bytes.length, pages: 0 };
    return current;
  };

  const finishFile = async () => {
    const file = current;
    current = undefined;
    if (!file) return;
    const path = join(dir, `${file.name}${OPEN_SUFFIX}`);
    try {
      // Every write before this one succeeded, so the bytes are readable; a
      // failed flush must not keep the records' file name from existing.
      await file.handle.sync().catch(() => undefined);
      await file.handle.close();
    } catch (error) {
      throw new WarcWriteError(path, error);
    }
    await rename(path, join(dir, file.name)).catch((error: unknown) => {
      // Our lease lapsed (a long stall) and another worker recovered the file: it is closed.
      if ((error as { code?: unknown }).code !== 'ENOENT') throw new WarcWriteError(path, error);
    });
  };

  /**
   * A write failed part-way: the file is cut back to its last whole record
   * and closed, so what it holds resolves and no later page lands after a
   * broken member. A file that cannot even be cut stays `.open` for recovery.
   */
  const abandonFile = async (file: OpenFile) => {
    current = undefined;
    try {
      await file.handle.truncate(file.size);
    } catch {
      await file.handle.close().catch(() => undefined);
      return;
    }
    current = file;
    await finishFile().catch(() => undefined);
  };

  const writeNow = async (exchange: ArchivedExchange): Promise<WarcLocation> => {
    const { WARCRecord, WARCSerializer } = await loadWarcio();
    const date = exchange.requestedAt.toISOString();
    const { revisit } = exchange;
    const payloadDigest = warcPayloadDigest(exchange.response.body);
    const refersTo = revisit?.refersTo;
    if (revisit?.profile === 'identical-payload-digest' && revisit.refersTo.payloadDigest !== payloadDigest) {
      throw new TypeError(`an identical-payload-digest revisit of ${exchange.url} whose payload differs from the capture it refers to`);
    }
    const response = WARCRecord.create(
      {
        url: exchange.url,
        date,
        type: revisit === undefined ? 'response' : 'revisit',
        warcVersion: WARC_VERSION,
        statusline: `HTTP/${exchange.response.httpVersion} ${exchange.response.status} ${exchange.response.statusText}`.trimEnd(),
        httpHeaders: responseHeaders(exchange.response.headers),
        warcHeaders: {
          'WARC-Record-ID': exchange.recordId ?? newWarcRecordId(),
          ...(revisit === undefined ? { 'WARC-Payload-Digest': payloadDigest } : revisitHeaders(revisit, payloadDigest, exchange.response.body.length)),
        },
        ...(refersTo === undefined ? {} : { refersToUrl: refersTo.targetUri, refersToDate: refersTo.date }),
      },
      // A revisit record keeps the response's head only: its payload is the capture it refers to.
      revisit === undefined ? [exchange.response.body] : [],
    );
    // warcio names the identical-payload-digest profile for every revisit record.
    if (revisit !== undefined) response.warcHeaders.headers.set('WARC-Profile', WARC_REVISIT_PROFILES[revisit.profile]);
    const responseId = response.warcHeaders.headers.get('WARC-Record-ID') ?? '';
    const request = WARCRecord.create(
      {
        url: exchange.url,
        date,
        type: 'request',
        warcVersion: WARC_VERSION,
        statusline: `${exchange.request.method} ${exchange.request.target} HTTP/${exchange.response.httpVersion}`,
        httpHeaders: exchange.request.headers.map(([name, value]) => [name, value] as [string, string]),
        warcHeaders: { 'WARC-Concurrent-To': responseId },
      },
      [],
    );
    const records = [response, request];
    if (exchange.rendered && revisit === undefined) {
      records.push(
        WARCRecord.create(
          {
            url: exchange.url,
            date,
            type: 'conversion',
            warcVersion: WARC_VERSION,
            warcHeaders: { 'WARC-Refers-To': responseId, 'Content-Type': exchange.rendered.contentType },
          },
          [exchange.rendered.body],
        ),
      );
    }
    const bytes = Buffer.concat(await Promise.all(records.map((record) => WARCSerializer.serialize(record, { gzip: true }))));
    // A file is written only while the lease surely covers it; past that, another worker may recover it.
    if (current && !leaseFresh()) await finishFile();
    let file = current ?? (await startFile());
    // A page larger than the cap still gets a file of its own rather than being refused.
    if (file.size + bytes.length > options.maxFileBytes && file.pages > 0) {
      await finishFile();
      file = await startFile();
    }
    const offset = file.size;
    try {
      await writeAll(file.handle, bytes, offset);
    } catch (error) {
      await abandonFile(file);
      throw new WarcWriteError(join(dir, `${file.name}${OPEN_SUFFIX}`), error);
    }
    file.size += bytes.length;
    file.pages += 1;
    return { file: file.name, offset, length: bytes.length };
  };

  return {
    id,
    write(exchange) {
      const written = queue.then(() => writeNow(exchange));
      queue = written.catch(() => undefined);
      return written;
    },
    async close() {
      await queue;
      clearInterval(heartbeat);
      await finishFile();
      // Held only while a file was open; ended once every file is closed.
      if (lease && heartbeat) await lease.release(id);
    },
  };
}

/**
 * Writes all of `bytes` at `position`. A write may take only part (a disk that
 * fills takes what fits, then fails the rest): the loop goes on until it is all
 * down or the file system says why not. Positioned, so a retry after a cut
 * never lands behind stray bytes.
 */
async function writeAll(handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let written = 0; written < bytes.length; ) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, position + written);
    if (bytesWritten <= 0) throw Object.assign(new Error('the file system took no bytes'), { code: 'EIO' });
    written += bytesWritten;
  }
}

/** A revisit record's own headers (WARC 1.1 section 6.7): the payload it repeats, and that its block was cut. */
function revisitHeaders(revisit: WarcRevisit, payloadDigest: string, bodyBytes: number): Record<string, string> {
  const headers: Record<string, string> = {};
  const { refersTo } = revisit;
  if (refersTo !== undefined) headers['WARC-Refers-To'] = refersTo.recordId;
  if (revisit.profile === 'identical-payload-digest') headers['WARC-Payload-Digest'] = payloadDigest;
  else if (refersTo !== undefined) headers['WARC-Payload-Digest'] = refersTo.payloadDigest;
  // The spec asks for it on an identical-digest record whose body was left out; a 304 has no body to cut.
  if (bodyBytes > 0) headers['WARC-Truncated'] = 'length';
  return headers;
}

/**
 * Node removes chunked framing before we see the body, so a `Transfer-Encoding:
 * chunked` header would describe bytes the record does not hold; it is kept
 * under another name (what other crawlers that store de-chunked bodies do).
 */
function responseHeaders(headers: readonly HeaderLine[]): [string, string][] {
  return headers.map(([name, value]) => (name.toLowerCase() === 'transfer-encoding' ? [`X-Crawlq-Orig-${name}`, value] : [name, value]));
}
