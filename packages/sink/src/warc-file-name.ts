import { hostname } from 'node:os';

/** The suffix of a file still being written (the convention Heritrix uses). */
export const OPEN_SUFFIX = '.open';

/** This machine's name as file names carry it (characters outside `[A-Za-z0-9.-]` become `_`). */
export function hostLabel(): string {
  return hostname().replace(/[^A-Za-z0-9.-]/g, '_');
}

/** `HOST-PID-RANDOM`: one writer, the lease it holds and the tail of its file names. */
export function warcWriterId(host: string, pid: number, token: string): string {
  return `${host}-${pid}-${token}`;
}

/** `PREFIX-TIMESTAMP-SERIAL-HOST-PID-RANDOM.warc.gz`: sortable, unique across machines and restarts. */
export function warcFileName(file: { readonly prefix: string; readonly openedAt: Date; readonly serial: number; readonly writer: string }): string {
  return `${file.prefix}-${stamp(file.openedAt)}-${String(file.serial).padStart(5, '0')}-${file.writer}.warc.gz`;
}

/** What the name of a `.open` file says about its writer. */
export interface OpenWarcFile {
  /** The name the file's records carry (without `.open`). */
  readonly closedName: string;
  readonly writer: string;
  readonly host: string;
  readonly pid: number;
}

const OPEN_TAIL = /^\d{17}-\d{5,}-([A-Za-z0-9._-]+)-(\d+)-([0-9a-f]{6})\.warc\.gz\.open$/;

/** The writer of a `.open` file named by a writer with this prefix, or undefined for any other file. */
export function parseOpenWarcFileName(name: string, prefix: string): OpenWarcFile | undefined {
  if (!name.startsWith(`${prefix}-`)) return undefined;
  const match = OPEN_TAIL.exec(name.slice(prefix.length + 1));
  if (!match) return undefined;
  const [, host = '', pid = '', token = ''] = match;
  return { closedName: name.slice(0, -OPEN_SUFFIX.length), writer: warcWriterId(host, Number(pid), token), host, pid: Number(pid) };
}

/** 20261202181502123: sortable, no separators (the usual WARC file-name timestamp). */
function stamp(date: Date): string {
  return date.toISOString().replace(/[-:TZ.]/g, '');
}
