// `@crawlq/crawler/protocol`: how `crawlq crawl` (the coordinator) and the
// `crawlq worker` processes it spawns talk, in one place for both sides: the
// messages over the child's IPC channel and the environment it is started
// with. It imports nothing, so the CLI can launch workers before it loads
// any crawl code.

/**
 * Coordinator to worker: the word to start, for a worker started ahead
 * (`awaitStart`): it loaded its code and waits for this before it touches
 * Redis, so it never joins a namespace `crawl` is still clearing.
 */
export const WORKER_START_MESSAGE = 'crawlq:start';

/**
 * Coordinator to worker: the frontier is drained; a `stop` signal aborted
 * with this reason is a normal end, not an interruption to report.
 */
export const CRAWL_FINISHED_MESSAGE = 'crawlq:crawl-finished';

/**
 * Coordinator to worker: Redis has been gone longer than `--redis-outage-limit`:
 * stop at once, without waiting for Redis and without a word (the
 * coordinator says why), and exit with the outage exit code.
 */
export const REDIS_OUTAGE_MESSAGE = 'crawlq:redis-outage';

/** Worker to coordinator: a worker started ahead has loaded its code and waits for {@link WORKER_START_MESSAGE}. */
export const WORKER_WAITING_MESSAGE = 'crawlq:waiting';

/** What a coordinator sends: only these strings mean anything to a worker. */
export type CoordinatorMessage = typeof WORKER_START_MESSAGE | typeof CRAWL_FINISHED_MESSAGE | typeof REDIS_OUTAGE_MESSAGE;
/** The two coordinator messages that stop a worker. */
export type CoordinatorStop = typeof CRAWL_FINISHED_MESSAGE | typeof REDIS_OUTAGE_MESSAGE;
/** What a worker sends. */
export type WorkerMessage = typeof WORKER_WAITING_MESSAGE;

const COORDINATOR_MESSAGES: ReadonlySet<unknown> = new Set<CoordinatorMessage>([WORKER_START_MESSAGE, CRAWL_FINISHED_MESSAGE, REDIS_OUTAGE_MESSAGE]);

/** A message from the IPC channel as a coordinator message, or undefined for anything else (which a worker ignores). */
export function decodeCoordinatorMessage(message: unknown): CoordinatorMessage | undefined {
  return COORDINATOR_MESSAGES.has(message) ? (message as CoordinatorMessage) : undefined;
}

/** A message from the IPC channel as a coordinator's word to stop, or undefined. */
export function decodeCoordinatorStop(message: unknown): CoordinatorStop | undefined {
  const decoded = decodeCoordinatorMessage(message);
  return decoded === CRAWL_FINISHED_MESSAGE || decoded === REDIS_OUTAGE_MESSAGE ? decoded : undefined;
}

/** A message from a worker's IPC channel as a worker message, or undefined. */
export function decodeWorkerMessage(message: unknown): WorkerMessage | undefined {
  return message === WORKER_WAITING_MESSAGE ? message : undefined;
}

/** The variables a coordinator sets in a worker's environment. */
export const WORKER_ENV = {
  /** The worker's number in the crawl (0, 1, ...): its log name `worker-N` and its metrics port, --metrics-port + N. */
  index: 'CRAWLQ_WORKER_INDEX',
  /** The config file `crawl` handed over: the worker removes it if `crawl` dies and cannot. */
  handoverFile: 'CRAWLQ_HANDOVER_FILE',
  /**
   * When `crawl` relays a worker's stderr (fd 2 is a pipe to it), it also
   * hands its own stderr over as this fd: the worker's lines go there once
   * `crawl` is gone, so a worker outliving a killed coordinator still says
   * why it stops.
   */
  directStderrFd: 'CRAWLQ_DIRECT_STDERR_FD',
  /** `1`: started ahead; say {@link WORKER_WAITING_MESSAGE} and wait for {@link WORKER_START_MESSAGE}. */
  awaitStart: 'CRAWLQ_AWAIT_START',
} as const;

/** How a coordinator starts one worker, as its environment carries it. */
export interface WorkerLaunch {
  readonly index: number;
  readonly handoverFile: string;
  readonly directStderrFd?: number | undefined;
  readonly awaitStart?: boolean | undefined;
}

/** The environment variables that tell a worker how it was launched ({@link decodeWorkerLaunch} reads them back). */
export function encodeWorkerLaunch(launch: WorkerLaunch): Record<string, string> {
  return {
    [WORKER_ENV.index]: String(launch.index),
    [WORKER_ENV.handoverFile]: launch.handoverFile,
    ...(launch.directStderrFd === undefined ? {} : { [WORKER_ENV.directStderrFd]: String(launch.directStderrFd) }),
    ...(launch.awaitStart === true ? { [WORKER_ENV.awaitStart]: '1' } : {}),
  };
}

/** What this process's environment says about its launch; each field is absent when not set (or not valid), as for a worker no coordinator started. */
export function decodeWorkerLaunch(env: NodeJS.ProcessEnv): Partial<WorkerLaunch> {
  const index = env[WORKER_ENV.index];
  const handoverFile = env[WORKER_ENV.handoverFile];
  // fds 0-2 are the standard streams: never a handed-over terminal.
  const fd = Number(env[WORKER_ENV.directStderrFd]);
  return {
    ...(index === undefined ? {} : { index: Number(index) }),
    ...(handoverFile === undefined ? {} : { handoverFile }),
    ...(Number.isInteger(fd) && fd >= 3 ? { directStderrFd: fd } : {}),
    awaitStart: env[WORKER_ENV.awaitStart] === '1',
  };
}
