import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ResultSink } from './result-sink.js';

/**
 * Appends one JSON object per line. The file is opened with O_APPEND and every
 * record is one complete line per write, so several worker processes on one
 * machine can share a file without interleaving lines.
 */
export function openJsonlSink(path: string): ResultSink {
  const file = resolve(path);
  mkdirSync(dirname(file), { recursive: true });
  const stream: WriteStream = createWriteStream(file, { flags: 'a' });
  let failure: Error | undefined;
  stream.on('error', (error) => {
    failure = error;
  });
  return {
    write(record) {
      if (failure) return Promise.reject(failure);
      const line = `${JSON.stringify(record)}\n`;
      // Respect backpressure: wait for drain instead of buffering without bound.
      return stream.write(line)
        ? Promise.resolve()
        : new Promise<void>((resolveWrite, reject) => {
            const onError = (error: Error) => reject(error);
            stream.once('error', onError);
            stream.once('drain', () => {
              stream.off('error', onError);
              resolveWrite();
            });
          });
    },
    close() {
      return new Promise((resolveClose, reject) => {
        if (stream.closed) return resolveClose();
        stream.end((error?: Error | null) => (error ? reject(error) : resolveClose()));
      });
    },
  };
}
