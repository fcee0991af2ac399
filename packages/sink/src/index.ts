export { SINK_REVISIT, SINK_ROW, type ResultSink, type SinkCheck, type SinkItem, type SinkRecord, type SinkRevisit } from './result-sink.js';
export { openJsonlSink } from './jsonl-sink.js';
export { openPostgresSink, type PostgresSinkOptions } from './postgres-sink.js';
export { openResultSink, sinkTargetOf, type OpenSinkOptions, type SinkSettings, type SinkTarget } from './open-result-sink.js';
export { openResultsStore, type ResultsStats, type ResultsStore, type StoredRecord } from './results-store.js';
export { urlFingerprint } from './postgres-rows.js';
export { RESULTS_TABLE } from './postgres-schema.js';
export { DatabaseConfigError, DatabaseUnavailableError, OutputPathError, SinkClosedError, SinkWriteError, WarcDirectoryError, WarcWriteError } from './errors.js';
export { checkAppendableFile, checkResultTarget, checkWritableDirectory, type CheckResultTargetOptions } from './output-checks.js';
export { csvHeader, csvLine, CSV_COLUMNS } from './csv.js';
export {
  newWarcRecordId,
  openWarcWriter,
  WARC_REVISIT_PROFILES,
  warcCaptureOf,
  warcPayloadDigest,
  type ArchivedExchange,
  type WarcCapture,
  type WarcLocation,
  type WarcRevisit,
  type WarcWriter,
  type WarcWriterOptions,
} from './warc-writer.js';
export { packCapture, unpackCapture } from './packed-capture.js';
export { WARC_LEASE_FENCE_MS, WARC_LEASE_RENEW_MS, WARC_LEASE_TTL_MS, type WarcWriterLease } from './warc-lease.js';
export { recoverWarcFiles, startWarcRecovery, type RecoveredWarcFile, type WarcRecovery, type WarcRecoveryOptions, type WarcRecoveryPass } from './warc-recovery.js';
