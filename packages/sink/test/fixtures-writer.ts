// Child process for the interleaving test: writes large records through the real sink.
import { openJsonlSink } from '../src/index.js';

const [file, name] = process.argv.slice(2);
const sink = openJsonlSink(file ?? 'missing.jsonl');
const pad = 'x'.repeat(3000);
for (let i = 0; i < 500; i += 1) await sink.write({ url: `http://w.test/${i}`, w: name, i, pad });
await sink.close();
