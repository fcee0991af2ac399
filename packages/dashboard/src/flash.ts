import type { Request, Response } from 'express';

const COOKIE = 'crawlq_flash';

/** A one-time message shown on the next page after an action. */
export interface Flash {
  readonly kind: 'ok' | 'error';
  readonly text: string;
}

/**
 * Keeps the message in a short-lived cookie rather than in the redirect URL,
 * so nobody can craft a link that shows a fake "retried 500" message.
 */
export function setFlash(res: Response, flash: Flash): void {
  res.cookie(COOKIE, Buffer.from(JSON.stringify(flash)).toString('base64url'), {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    maxAge: 60_000,
  });
}

/** Reads the pending message, if any, and clears it. */
export function takeFlash(req: Request, res: Response): Flash | undefined {
  const raw = (req.headers.cookie ?? '')
    .split(';')
    .map((part) => part.trim())
    .find((part) => part.startsWith(`${COOKIE}=`))
    ?.slice(COOKIE.length + 1);
  if (raw === undefined) return undefined;
  res.clearCookie(COOKIE, { httpOnly: true, sameSite: 'strict', path: '/' });
  try {
    const parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { kind, text } = parsed as Record<string, unknown>;
    if ((kind === 'ok' || kind === 'error') && typeof text === 'string') return { kind, text: text.slice(0, 500) };
  } catch {
    // A mangled cookie: show nothing.
  }
  return undefined;
}
