import { SMTPServer } from 'smtp-server';

/** A real SMTP server on loopback that keeps every message it accepts. */
export interface TestSmtp {
  readonly port: number;
  readonly messages: string[];
  /** When each message of `messages` had arrived whole (ms since the epoch), by the server's own clock. */
  readonly arrivedAt: number[];
  /** MAIL FROM commands seen, accepted or not. */
  mailFromCount(): number;
  close(): Promise<void>;
}

/**
 * Starts smtp-server on 127.0.0.1. `rejectFirst` MAIL FROM commands are
 * refused with 421 (service not available), as a struggling server would.
 */
export async function startSmtp(options: { port?: number; rejectFirst?: number } = {}): Promise<TestSmtp> {
  const messages: string[] = [];
  const arrivedAt: number[] = [];
  let rejects = options.rejectFirst ?? 0;
  let mailFrom = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onMailFrom(_address, _session, callback) {
      mailFrom += 1;
      if (rejects > 0) {
        rejects -= 1;
        callback(Object.assign(new Error('Service not available, try later'), { responseCode: 421 }));
        return;
      }
      callback();
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        messages.push(Buffer.concat(chunks).toString('utf8'));
        arrivedAt.push(Date.now());
        callback();
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    messages,
    arrivedAt,
    mailFromCount: () => mailFrom,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}


/** Sums the "By group" rows of a digest's text part. */
export function groupCounts(text: string): Record<string, number> {
  const section = /By group[^\n]*:\n((?: {2}.*\n)+)/.exec(text)?.[1] ?? '';
  const counts: Record<string, number> = {};
  for (const line of section.split('\n')) {
    const match = /^ {2}(\S+)\s+(\d+)$/.exec(line);
    if (match?.[1] !== undefined) counts[match[1]] = Number(match[2]);
  }
  return counts;
}
