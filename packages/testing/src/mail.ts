// A minimal reader of raw e-mails, for tests that check what alerts sent.

/** A header of a raw message (unfolded, first occurrence). */
export function mailHeader(raw: string, name: string): string | undefined {
  const head = raw.split(/\r?\n\r?\n/)[0] ?? '';
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
  const line = unfolded.split(/\r?\n/).find((candidate) => candidate.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

/** The decoded body of the first MIME part with this content type (multipart, base64, quoted-printable). */
export function mimePart(raw: string, contentType: 'text/plain' | 'text/html'): string | undefined {
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(raw)?.[1];
  const parts = boundary === undefined ? [raw] : raw.split(`--${boundary}`);
  for (const part of parts) {
    const [head = '', ...rest] = part.replace(/^\r?\n/, '').split(/\r?\n\r?\n/);
    if (!new RegExp(`content-type:\\s*${contentType}`, 'i').test(head)) continue;
    const body = rest.join('\n\n').replace(/\r\n/g, '\n').replace(/\n$/, '');
    const encoding = /content-transfer-encoding:\s*([\w-]+)/i.exec(head)?.[1]?.toLowerCase();
    if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    if (encoding === 'quoted-printable') {
      const bytes = body.replace(/=\n/g, '').replace(/=([0-9A-F]{2})/gi, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
      return Buffer.from(bytes, 'latin1').toString('utf8');
    }
    return body;
  }
  return undefined;
}
