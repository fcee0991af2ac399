import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { AlertMailConfig } from './alert-config.js';
import type { DigestEmail } from './digest-email.js';
import { AlertConfigError, AlertDeliveryError } from './errors.js';
import { redactText } from '@crawlq/urls';

/** Where a sent alert went. */
export interface Delivery {
  /** The `.eml` file, when there is no SMTP server configured. */
  readonly outboxFile?: string;
  readonly messageId?: string;
}

/** Stable names of one digest's message. */
export interface MessageRef {
  readonly id: string;
  readonly fileStem: string;
}

/** Sends rendered e-mails over SMTP, or writes them to the outbox directory. */
export interface MailDelivery {
  /**
   * `ref.id` (the digest id) names the message and `ref.fileStem` its outbox
   * file, both stable per digest: a re-send overwrites rather than duplicates.
   */
  send(email: DigestEmail, ref: MessageRef): Promise<Delivery>;
  close(): void;
}

/** Seconds-level timeouts: a hung SMTP server must fail the attempt, not the worker. */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

/**
 * A transport made on first use: nodemailer is loaded only when an alert is
 * sent, so a worker, which starts an alert worker, starts without it.
 */
function lazyTransport<T extends Transporter>(create: (mailer: typeof nodemailer) => T): { get(): Promise<T>; close(): void } {
  let transport: Promise<T> | undefined;
  let closed = false;
  return {
    get: () =>
      (transport ??= import('nodemailer').then((module) => {
        const made = create(module.default);
        if (closed) made.close();
        return made;
      })),
    close: () => {
      closed = true;
      void transport?.then((made) => made.close(), () => undefined);
    },
  };
}

/**
 * Checks the settings; the transport is made on the first send (no connection is made before).
 * @throws AlertConfigError for an SMTP URL that cannot work, or SMTP without recipients.
 */
export function createMailDelivery(config: AlertMailConfig): MailDelivery {
  const envelope = { from: config.from, to: [...config.to] };
  if (config.smtpUrl === undefined || config.smtpUrl === '') {
    const transport = lazyTransport((mailer) => mailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' }));
    return {
      async send(email, ref) {
        const info = await (await transport.get()).sendMail(message(email, ref, envelope));
        const file = join(config.outboxDir, `${safeName(ref.fileStem)}.eml`);
        try {
          await mkdir(config.outboxDir, { recursive: true });
          // Write then rename: a reader never sees half a message.
          await writeFile(`${file}.tmp`, info.message as Buffer, { mode: 0o600 });
          await rename(`${file}.tmp`, file);
        } catch (error) {
          throw new AlertDeliveryError('outbox', `cannot write ${file}: ${(error as Error).message}`, { cause: error });
        }
        return { outboxFile: file, messageId: info.messageId };
      },
      close: () => transport.close(),
    };
  }
  if (config.to.length === 0) throw new AlertConfigError('alerts: an SMTP URL is set but there are no recipients (alert "to" is empty)');
  const options = smtpOptions(config);
  const transport = lazyTransport((mailer) => mailer.createTransport(options));
  return {
    async send(email, ref) {
      try {
        const info = await (await transport.get()).sendMail(message(email, ref, envelope));
        return { messageId: info.messageId };
      } catch (error) {
        const code = (error as { responseCode?: unknown }).responseCode;
        throw new AlertDeliveryError('smtp', `SMTP delivery failed: ${redactText((error as Error).message ?? String(error))}`, {
          cause: error,
          responseCode: typeof code === 'number' ? code : null,
        });
      }
    },
    close: () => transport.close(),
  };
}

function smtpOptions(config: AlertMailConfig) {
  let url: URL;
  try {
    url = new URL(config.smtpUrl ?? '');
  } catch (error) {
    throw new AlertConfigError('alerts: the SMTP URL does not parse (expected smtp://host:port or smtps://host:port)', { cause: error });
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw new AlertConfigError(`alerts: unsupported SMTP URL scheme ${url.protocol} (expected smtp: or smtps:)`);
  }
  const user = url.username ? decodeURIComponent(url.username) : config.smtpUser;
  const pass = url.password ? decodeURIComponent(url.password) : config.smtpPassword;
  const secure = url.protocol === 'smtps:';
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    ...(user === undefined || user === '' ? {} : { auth: { user, pass: pass ?? '' } }),
    ...SMTP_TIMEOUTS,
  };
}

function message(email: DigestEmail, ref: MessageRef, envelope: { from: string; to: string[] }): Mail.Options {
  return {
    from: envelope.from,
    to: envelope.to,
    subject: email.subject,
    text: email.text,
    html: email.html,
    // Stable per digest: a re-send after a crash is recognisably the same message.
    messageId: `<${safeName(ref.fileStem)}@crawlq.invalid>`,
    headers: { 'X-Crawlq-Digest': safeName(ref.id) },
  };
}

function safeName(key: string): string {
  return key.replace(/[^A-Za-z0-9._-]+/g, '_');
}
