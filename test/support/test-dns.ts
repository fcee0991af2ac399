import { createSocket, type Socket } from 'node:dgram';

/**
 * A tiny DNS server on loopback for tests: answers A queries from a table
 * the test changes at will (a name whose address flips mid-crawl), with the
 * TTL it is given; NXDOMAIN for a name it does not know, no records for
 * other query types. UDP only, one question per query, as resolvers ask.
 */
export class TestDns {
  readonly #socket: Socket;
  readonly #names = new Map<string, string>();
  readonly #ttlSeconds: number;
  /** Queries answered, by name: how often the crawl resolved each. */
  readonly queries = new Map<string, number>();

  private constructor(socket: Socket, ttlSeconds: number) {
    this.#socket = socket;
    this.#ttlSeconds = ttlSeconds;
    socket.on('message', (message, peer) => {
      const reply = this.#answer(message);
      if (reply) socket.send(reply, peer.port, peer.address);
    });
  }

  static async start(options: { readonly ttlSeconds: number }): Promise<TestDns> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, '127.0.0.1', () => resolve());
    });
    return new TestDns(socket, options.ttlSeconds);
  }

  /** `127.0.0.1:PORT`, as `--dns-servers` takes it. */
  get server(): string {
    const { port } = this.#socket.address();
    return `127.0.0.1:${port}`;
  }

  /** Points `name` at `address` from the next query on. */
  set(name: string, address: string): void {
    this.#names.set(name.toLowerCase(), address);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#socket.close(() => resolve()));
  }

  #answer(query: Buffer): Buffer | undefined {
    if (query.length < 17) return undefined;
    const labels: string[] = [];
    let at = 12;
    while (at < query.length && query[at] !== 0) {
      const length = query[at] ?? 0;
      labels.push(query.subarray(at + 1, at + 1 + length).toString('latin1'));
      at += 1 + length;
    }
    const questionEnd = at + 5;
    if (questionEnd > query.length) return undefined;
    const type = query.readUInt16BE(at + 1);
    const name = labels.join('.').toLowerCase();
    this.queries.set(name, (this.queries.get(name) ?? 0) + 1);
    const address = this.#names.get(name);
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    // QR, opcode 0, AA, RD copied, RA; rcode 3 (NXDOMAIN) for an unknown name.
    header.writeUInt16BE(0x8580 | (address === undefined ? 3 : 0), 2);
    header.writeUInt16BE(1, 4);
    const answers: Buffer[] = [];
    if (address !== undefined && type === 1) {
      const record = Buffer.alloc(16);
      record.writeUInt16BE(0xc00c, 0);
      record.writeUInt16BE(1, 2);
      record.writeUInt16BE(1, 4);
      record.writeUInt32BE(this.#ttlSeconds, 6);
      record.writeUInt16BE(4, 10);
      address.split('.').forEach((octet, i) => record.writeUInt8(Number(octet), 12 + i));
      answers.push(record);
    }
    header.writeUInt16BE(answers.length, 6);
    return Buffer.concat([header, query.subarray(12, questionEnd), ...answers]);
  }
}
