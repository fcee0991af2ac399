import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, rename, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import type * as Warcio from 'warcio';

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
}

/** Where a page's records landed: enough to find them again without an index. */
export interface WarcLocation {
  /** File name (no directory), as it is once the file is closed. */
  readonly file: string;
  /** Byte offset of the response record's gzip member. */
  readonly offset: number;
  /** Bytes of the response and request records together. */
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
}

/** Writes WARC 1.1 files for one process: one gzip member per record, rotated by size. */
export interface WarcWriter {
  write(exchange: ArchivedExchange): Promise<WarcLocation>;
  /** Closes the current file (dropping its `.open` suffix). */
  close(): Promise<void>;
}

const WARC_VERSION = 'WARC/1.1';

let warcio: Promise<typeof Warcio> | undefined;
/** warcio is loaded with the first record: only `--warc` crawls need it, and workers start faster without it (issue 12). */
const loadWarcio = (): Promise<typeof Warcio> => (warcio ??= import('warcio'));

/**
 * One writer per worker process. File names are unique across machines and
 * restarts: prefix, open time, serial, host, pid and a random token (two
 * containers can share a host name and pid 1). A file being written ends in
 * `.open` and is renamed when closed, the convention Heritrix uses, so a
 * reader knows which files are complete; a killed worker leaves `.open` files
 * whose records up to the last whole gzip member are readable.
 */
export function openWarcWriter(options: WarcWriterOptions): WarcWriter {
  const dir = resolve(options.dir);
  mkdirSync(dir, { recursive: true });
  const host = hostname().replace(/[^A-Za-z0-9.-]/g, '_');
  const token = randomBytes(3).toString('hex');
  let serial = 0;
  let current: { handle: FileHandle; name: string; size: number; pages: number } | undefined;
  // Writes are chained: each page's records are appended whole, in order.
  let queue: Promise<unknown> = Promise.resolve();

  const startFile = async () => {
    const name = `${options.prefix}-${stamp(new Date())}-${String(serial).padStart(5, '0')}-${host}-${process.pid}-${token}.warc.gz`;
    serial += 1;
    const { WARCRecord, WARCSerializer } = await loadWarcio();
    const handle = await open(join(dir, `${name}.open`), 'wx');
    const info = WARCRecord.createWARCInfo(
      { filename: name, warcVersion: WARC_VERSION },
      { software: options.software, format: 'WARC File Format 1.1', conformsTo: 'https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/', hostname: hostname(), isPartOf: options.prefix },
    );
    const bytes = await WARCSerializer.serialize(info, { gzip: true });
    await handle.write(bytes);
    current = { handle, name, size: bytes.length, pages: 0 };
    return current;
  };

  const finishFile = async () => {
    const file = current;
    current = undefined;
    if (!file) return;
    await file.handle.sync();
    await file.handle.close();
    await rename(join(dir, `${file.name}.open`), join(dir, file.name));
  };

  const writeNow = async (exchange: ArchivedExchange): Promise<WarcLocation> => {
    const { WARCRecord, WARCSerializer } = await loadWarcio();
    const date = exchange.requestedAt.toISOString();
    const response = WARCRecord.create(
      {
        url: exchange.url,
        date,
        type: 'response',
        warcVersion: WARC_VERSION,
        statusline: `HTTP/${exchange.response.httpVersion} ${exchange.response.status} ${exchange.response.statusText}`.trimEnd(),
        httpHeaders: responseHeaders(exchange.response.headers),
      },
      [exchange.response.body],
    );
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
    const bytes = Buffer.concat([await WARCSerializer.serialize(response, { gzip: true }), await WARCSerializer.serialize(request, { gzip: true })]);
    let file = current ?? (await startFile());
    // A page larger than the cap still gets a file of its own rather than being refused.
    if (file.size + bytes.length > options.maxFileBytes && file.pages > 0) {
      await finishFile();
      file = await startFile();
    }
    const offset = file.size;
    await file.handle.write(bytes);
    file.size += bytes.length;
    file.pages += 1;
    return { file: file.name, offset, length: bytes.length };
  };

  return {
    write(exchange) {
      const written = queue.then(() => writeNow(exchange));
      queue = written.catch(() => undefined);
      return written;
    },
    async close() {
      await queue;
      await finishFile();
    },
  };
}

/**
 * Node removes chunked framing before we see the body, so a `Transfer-Encoding:
 * chunked` header would describe bytes the record does not hold; it is kept
 * under another name (what other crawlers that store de-chunked bodies do).
 */
function responseHeaders(headers: readonly HeaderLine[]): [string, string][] {
  return headers.map(([name, value]) => (name.toLowerCase() === 'transfer-encoding' ? [`X-Crawlq-Orig-${name}`, value] : [name, value]));
}

/** 20261202181502123: sortable, no separators (the usual WARC file-name timestamp). */
function stamp(date: Date): string {
  return date.toISOString().replace(/[-:TZ.]/g, '');
}
