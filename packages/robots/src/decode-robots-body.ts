/** The part of a robots.txt body that is parsed. */
export interface DecodedRobotsBody {
  /** UTF-8 text of the first `maxBytes` bytes, without BOM, ending at a line break when cut. */
  readonly text: string;
  /** The body was longer than `maxBytes`. */
  readonly truncated: boolean;
}

/**
 * Decodes the first `maxBytes` bytes of a robots.txt body as UTF-8 (RFC 9309
 * 2.5: parse at least 500 KiB). A byte-order mark is dropped; invalid bytes
 * become U+FFFD instead of throwing, whatever the Content-Type said. When the
 * body is cut, the last, incomplete line is dropped too: `Allow: /shop/cart`
 * cut to `Allow: /s` would allow far more than the author wrote.
 */
export function decodeRobotsBody(body: Uint8Array, maxBytes: number, options: { readonly cut?: boolean } = {}): DecodedRobotsBody {
  // `cut`: the fetch itself stopped reading, so even a body within maxBytes is incomplete.
  const truncated = body.byteLength > maxBytes || options.cut === true;
  // TextDecoder drops a leading BOM by default (ignoreBOM: false).
  let text = new TextDecoder('utf-8').decode(truncated ? body.subarray(0, maxBytes) : body);
  if (truncated) {
    const lastBreak = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'));
    text = lastBreak === -1 ? '' : text.slice(0, lastBreak + 1);
  }
  return { text, truncated };
}
