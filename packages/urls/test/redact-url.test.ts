import { generatedPasswords, PRINTABLE_SPECIALS } from '@crawlq/testing';
import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { InvalidUrlError, redactConnectionUrl, redactOutput, redactText, redactUrl, redactWrites, withoutUserinfo } from '../src/index.js';

/** Every run of six characters of `secret`: a leak of a part of it is a leak too. */
function windowsOf(secret: string): string[] {
  return Array.from({ length: secret.length - 5 }, (_, index) => secret.slice(index, index + 6));
}

function leakedPart(shown: string, secret: string): string | undefined {
  return windowsOf(secret).find((window) => shown.includes(window));
}

/** How a URL with a password can be written, well or badly: the password is never percent-encoded here. */
const SPELLINGS: readonly ((password: string) => string)[] = [
  (pw) => `redis://:${pw}@127.0.0.1:6379/0`,
  (pw) => `rediss://default:${pw}@cache.example.com:6380`,
  (pw) => `redis//:${pw}@127.0.0.1:6379`,
  (pw) => `redis:/:${pw}@127.0.0.1:6379`,
  (pw) => `redis::${pw}@127.0.0.1:6379`,
  (pw) => `postgres://crawlq:${pw}@db.internal:5432/crawl`,
  (pw) => `postgresql://crawlq:${pw}@127.0.0.1/crawl?sslmode=disable`,
  (pw) => `smtp://alerts:${pw}@mail.example.com:587`,
  (pw) => `smtps://alerts@example.com:${pw}@mail.example.com`,
  (pw) => `https://ops:${pw}@dash.example.com/crawlq`,
  (pw) => `HTTP:\\\\ops:${pw}@dash.example.com`,
];

/** Where such a URL turns up in crawlq's output. */
const CONTEXTS: readonly ((url: string) => string)[] = [
  (url) => url,
  (url) => `crawlq: --redis-url: expected a redis:// or rediss:// URL (got ${JSON.stringify(url)})`,
  (url) => `cannot reach Redis at ${url}: connect ECONNREFUSED 127.0.0.1:6379`,
  (url) => `waiting for PostgreSQL at ${url} (connect ECONNREFUSED); retrying`,
  (url) => `first line\n${url}\nlast line`,
];

describe('redaction: the one owner', () => {
  it('shows a URL without userinfo and with secret query values masked, leaves other URLs untouched', () => {
    expect(redactUrl('https://u:p@x.test/a?b=1')).toBe('https://x.test/a?b=1');
    expect(redactUrl('https://TOKEN@x.test/a')).toBe('https://x.test/a');
    expect(redactUrl('https://x.test/a?API_KEY=1&sig=2&q=ok')).toBe('https://x.test/a?API_KEY=***&sig=***&q=ok');
    expect(redactUrl('https://x.test/%7Euser/a%20b')).toBe('https://x.test/%7Euser/a%20b');
    expect(redactUrl('https://example.com/a@b')).toBe('https://example.com/a@b');
    expect(redactUrl('https://medium.com/@user/post?x=a@b')).toBe('https://medium.com/@user/post?x=a@b');
  });

  it('masks a password that holds an @, a /, a # or a space, up to the last @', () => {
    expect(redactText('https://user:pa@ss@example.com/x?y=1')).toBe('https://user:***@example.com/x?y=1');
    expect(redactText('redis://:pa/ss@127.0.0.1:1')).toBe('redis://:***@127.0.0.1:1');
    expect(redactText('redis://:pa#ss@127.0.0.1:1')).toBe('redis://:***@127.0.0.1:1');
    expect(redactText('at postgres://u:pa ss@h/db: refused')).toBe('at postgres://u:***@h/db: refused');
    expect(redactText('redis//:pw1234@127.0.0.1:1')).toBe('redis//:***@127.0.0.1:1');
    // A user name with odd characters is masked with the password.
    expect(redactText('smtps://a"b:pw@mail.test')).toBe('smtps://***@mail.test');
    // One URL to show loses them all, parseable or not.
    expect(redactUrl('https://user:pa/ss@example.com/x')).toBe('https://example.com/x');
    expect(redactUrl('redis//:pw1234@127.0.0.1:1')).toBe('redis//127.0.0.1:1');
  });

  it('strips credentials from record URLs as the URL parser reads them, keeping an @ of a path', () => {
    expect(withoutUserinfo('http://u:p@ss@127.0.0.1:8080/x?token=1')).toBe('http://127.0.0.1:8080/x?token=1');
    expect(withoutUserinfo('https://example.com/@user')).toBe('https://example.com/@user');
    expect(withoutUserinfo('http://u:p%2Fw@a.test/')).toBe('http://a.test/');
    expect(withoutUserinfo('http://u:p/w@a.test/')).toBe('http://a.test/');
  });

  it('redacts Redis and SMTP URLs in text, even ones that do not parse', () => {
    expect(redactUrl('redis://user:S3cr3t@host:6380/0')).toBe('redis://host:6380/0');
    expect(redactText('bad value "redis://:S3cr3t@127.0.0.1:99999"')).toBe('bad value "redis://:***@127.0.0.1:99999"');
    expect(redactText('see ftp://me:pw@files.test/x and https://y.test/')).toBe('see ftp://me:***@files.test/x and https://y.test/');
    expect(redactText('Authorization: Bearer abc.def')).toBe('Authorization: ***');
  });

  it('leaves text without credentials as it is', () => {
    for (const text of ['crawlq: --redis-url: expected a redis:// or rediss:// URL', 'mail alerts@example.com about http://a.test/x', 'at 10:30 see https://a.test/', 'host:6379 ok']) {
      expect(redactText(text)).toBe(text);
    }
  });

  it('masks a connection value before its last @ whatever the spelling, scheme or none', () => {
    expect(redactConnectionUrl(':pw@127.0.0.1:6379')).toBe(':***@127.0.0.1:6379');
    expect(redactConnectionUrl('user:p w/x@host')).toBe('user:***@host');
    expect(redactConnectionUrl('redis//:a/b@host')).toBe('redis//:***@host');
    expect(redactConnectionUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
  });

  it('removes a known password wherever a message quotes it bare', () => {
    expect(redactText('password "hunter2/x" refused', 'postgres://u:hunter2/x@h/db')).toBe('password "***" refused');
    expect(redactText('got p@ss w0rd', 'postgres://u:p%40ss%20w0rd@h/db')).toBe('got ***');
  });

  it('keeps a JSON log line valid JSON, each string redacted on its own', () => {
    const line = JSON.stringify({ level: 'error', msg: 'cannot reach redis://:p"w/x@h:1', port: 'h:6379', mail: 'a@b.test' });
    const redacted = redactOutput(`${line}\nplain redis://:pw/x@h`);
    const [json, plain] = redacted.split('\n');
    expect(JSON.parse(json ?? '')).toEqual({ level: 'error', msg: 'cannot reach redis://:***@h:1', port: 'h:6379', mail: 'a@b.test' });
    expect(plain).toBe('plain redis://:***@h');
    const clean = JSON.stringify({ msg: 'fine' });
    expect(redactOutput(clean)).toBe(clean);
  });

  it('guards a stream: text and bytes written to it are redacted, once however often it is guarded', () => {
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
    redactWrites(stream);
    redactWrites(stream);
    stream.write('crawlq: cannot reach redis://:p/w#x@h:1\n');
    stream.write(Buffer.from('{"msg":"at smtp://u:a b@m.test"}\n'));
    expect(chunks).toEqual(['crawlq: cannot reach redis://:***@h:1\n', '{"msg":"at smtp://u:***@m.test"}\n']);
  });

  it('keeps credentials out of InvalidUrlError messages', () => {
    const error = new InvalidUrlError('scheme', 'ftp://bob:hunter2@files.test/x');
    expect(error.message).not.toContain('hunter2');
    expect(error.input).toBe('ftp://bob:***@files.test/x');
  });

  // Generated: every printable character, in every spelling and every context; a seed that fails says which.
  it.each([1, 2, 3])('never shows a part of 1,000 generated passwords (seed %i), each special character at a random place', { timeout: 120_000 }, (seed) => {
    const specials = [...PRINTABLE_SPECIALS];
    const passwords = [
      ...generatedPasswords({ seed, count: 600 }),
      // Each special character alone, then in threes, so none hides behind another.
      ...generatedPasswords({ seed: seed + 100, count: 200 }).map((password, index) => `${password}${specials[index % specials.length] ?? ''}x9`),
      ...generatedPasswords({ seed: seed + 200, count: 200 }).map((password, index) => {
        const three = [0, 1, 2].map((offset) => specials[(index * 3 + offset) % specials.length] ?? '').join('');
        return `${three.slice(0, 1)}${password.slice(0, 4)}${three.slice(1)}${password.slice(4)}`;
      }),
    ];
    let checked = 0;
    const problems: string[] = [];
    const check = (shown: string, password: string, context: string) => {
      const leaked = leakedPart(shown, password);
      if (leaked !== undefined) problems.push(`${JSON.stringify(password)} leaked ${JSON.stringify(leaked)} from ${context}: ${shown}`);
    };
    for (const password of passwords) {
      for (const spell of SPELLINGS) {
        const url = spell(password);
        for (const context of CONTEXTS) {
          const text = context(url);
          check(redactText(text), password, text);
          check(redactOutput(JSON.stringify({ msg: text })), password, text);
          check(redactUrl(text), password, text);
          checked++;
        }
        const connection = redactConnectionUrl(url);
        check(connection, password, url);
        // Only the credentials go: the host stays to say which server.
        if (!/@(127\.0\.0\.1|cache\.example\.com|db\.internal|mail\.example\.com|dash\.example\.com)/.test(connection)) problems.push(`no host left in ${connection}`);
      }
    }
    expect(problems.slice(0, 5)).toEqual([]);
    expect(checked).toBe(passwords.length * SPELLINGS.length * CONTEXTS.length);
  });
});
