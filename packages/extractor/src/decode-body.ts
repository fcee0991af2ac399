import { TextDecoder } from 'node:util';

/** The decoded text of a body and the encoding that decoded it. */
export interface DecodedBody {
  readonly text: string;
  /** WHATWG encoding name actually used (`utf-8`, `windows-1252`, `shift_jis`...). */
  readonly charset: string;
}

// The HTML standard's prescan reads 1024 bytes; real pages put a long
// <head> (inline styles, many <link>s) before the meta, so look further.
const PRESCAN_BYTES = 4096;
const META_TAG = /<meta\b[^>]*>/gi;
const ATTRIBUTE = /([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
const CHARSET_IN_CONTENT = /charset\s*=\s*["']?\s*([^\s"';]+)/i;
const COMMENT = /<!--[\s\S]*?(?:-->|$)/g;

/**
 * Decodes an HTML body to text, choosing the encoding the way browsers do:
 * 1. a byte order mark (UTF-8, UTF-16LE/BE) wins, since the bytes prove it;
 * 2. else the `charset` parameter of `Content-Type`, if it names an encoding;
 * 3. else `<meta charset>` or `<meta http-equiv="Content-Type"
 *    content="...; charset=...">` in the first 4 KiB (a meta naming UTF-16
 *    means UTF-8: the page could not have been read as ASCII otherwise);
 * 4. else UTF-8.
 *
 * Labels resolve per the WHATWG Encoding standard, so `iso-8859-1` and
 * `latin1` decode as `windows-1252` (a superset), `sjis` as `shift_jis`.
 * Undecodable bytes become U+FFFD; decoding never throws.
 */
export function decodeBody(body: Uint8Array, contentType?: string): DecodedBody {
  const bom = sniffBom(body);
  const charset =
    bom ?? decoderName(charsetParam(contentType)) ?? metaCharset(body) ?? 'utf-8';
  const text =
    charset === 'windows-1252'
      ? decodeWindows1252(body)
      : // TextDecoder removes a BOM that matches its encoding by itself.
        decoderFor(charset).decode(body);
  return { text, charset };
}

function sniffBom(body: Uint8Array): string | undefined {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  return undefined;
}

/** The `charset` parameter of a Content-Type value, unquoted. */
function charsetParam(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  for (const param of contentType.split(';').slice(1)) {
    const equals = param.indexOf('=');
    if (equals === -1) continue;
    if (param.slice(0, equals).trim().toLowerCase() !== 'charset') continue;
    return param.slice(equals + 1).trim().replace(/^"(.*)"$/, '$1');
  }
  return undefined;
}

// WHATWG index-windows-1252 for bytes 0x80-0x9F; every other byte maps to
// the same code point (that part is Latin-1).
const WINDOWS_1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';
const C1_CONTROL = /[\u0080-\u009f]/g;

/**
 * Node's TextDecoder decodes windows-1252 as Latin-1 since 20.18.3 / 22.13.0
 * (nodejs/node#56542, #60888), turning curly quotes and the euro sign into
 * C1 controls; windows-1252 is also what `iso-8859-1`, `latin1` and `ascii`
 * labels mean on the web, so decode it here.
 */
function decodeWindows1252(body: Uint8Array): string {
  const latin1 = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1');
  return latin1.replace(C1_CONTROL, (char) => WINDOWS_1252_HIGH.charAt(char.charCodeAt(0) - 0x80));
}

// Decoding without `stream` keeps no state, so one decoder per encoding
// serves every page. Labels come from pages, hence the size bound.
const decoders = new Map<string, TextDecoder>();
const labelNames = new Map<string, string | undefined>();

function decoderFor(name: string): TextDecoder {
  let decoder = decoders.get(name);
  if (decoder === undefined) {
    decoder = new TextDecoder(name);
    decoders.set(name, decoder);
  }
  return decoder;
}

/** Canonical encoding name for a label, or undefined if TextDecoder does not know it. */
function decoderName(rawLabel: string | undefined): string | undefined {
  const label = rawLabel?.trim().toLowerCase();
  if (label === undefined || label === '') return undefined;
  if (labelNames.has(label)) return labelNames.get(label);
  let name: string | undefined;
  if (label === 'x-user-defined') {
    // Node has no decoder for it; it maps ASCII like windows-1252 does.
    name = 'windows-1252';
  } else {
    try {
      name = new TextDecoder(label).encoding;
    } catch {
      // Unknown label (or "replacement", which Node refuses): next source.
      name = undefined;
    }
  }
  if (labelNames.size > 1000) labelNames.clear();
  labelNames.set(label, name);
  return name;
}

function metaCharset(body: Uint8Array): string | undefined {
  // latin1 maps each byte to one code unit, so ASCII markup reads the same
  // in every ASCII-compatible encoding, which is all a prescan needs.
  const head = Buffer.from(body.buffer, body.byteOffset, Math.min(body.byteLength, PRESCAN_BYTES))
    .toString('latin1')
    .replace(COMMENT, '');
  for (const tag of head.match(META_TAG) ?? []) {
    const attributes = metaAttributes(tag);
    let label = attributes.get('charset');
    if (label === undefined && attributes.get('http-equiv')?.trim().toLowerCase() === 'content-type') {
      label = CHARSET_IN_CONTENT.exec(attributes.get('content') ?? '')?.[1];
    }
    const name = decoderName(label);
    if (name === undefined) continue;
    return name === 'utf-16le' || name === 'utf-16be' ? 'utf-8' : name;
  }
  return undefined;
}

/** Attributes of one `<meta ...>` tag, names lower-cased, first occurrence wins. */
function metaAttributes(tag: string): Map<string, string> {
  const attributes = new Map<string, string>();
  // Skip "<meta" itself.
  for (const match of tag.slice(5).matchAll(ATTRIBUTE)) {
    const name = (match[1] ?? '').toLowerCase();
    if (!attributes.has(name)) attributes.set(name, match[2] ?? match[3] ?? match[4] ?? '');
  }
  return attributes;
}
