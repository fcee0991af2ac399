export { openJsonlSink, type ResultSink } from './jsonl-sink.js';
