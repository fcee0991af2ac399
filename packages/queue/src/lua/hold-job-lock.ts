import { defineLuaScript, type RedisClient } from '@crawlq/redis';
import { QUEUE_LUA } from './files.js';

/**
 * Confirms that a worker still holds a job before it writes the job's record,
 * and keeps the job for another lock period: the lock holds `token`, its
 * expiry is pushed back; the lock is gone but the job is still active (its
 * lock ran out while Redis was away, and no stalled check handed the job on),
 * the lock is taken again and the job leaves the stalled candidates, as a
 * renewal would have done. Anything else (another worker's token, or the job
 * no longer active: handed back to the queue, or finished by someone else)
 * means another worker fetches and records this job, so this one must not.
 * Its KEYS, ARGV and reply: `lua/hold-job-lock.lua`.
 */
export const holdJobLockScript = defineLuaScript<number>({
  name: 'queue-hold-job-lock',
  keys: 3,
  decode: (reply) => Number(reply),
  file: QUEUE_LUA.file('lua/hold-job-lock.lua'),
});

/** The job a lock check is about: BullMQ's `Job` has both. */
export interface LockedJob {
  readonly id?: string | undefined;
  /** `<prefix>:<queue name>`, where BullMQ keeps the queue's keys. */
  readonly queueQualifiedName: string;
}

/** Who asks to keep a job, and for how long. */
export interface JobLockHold {
  /** The lock token BullMQ gave the worker with the job. */
  readonly token: string;
  /** How long the lock then runs: the Worker's `lockDuration`. */
  readonly lockDurationMs: number;
}

/**
 * True when the worker whose lock token is `token` still holds `job`, which
 * it then keeps for `lockDurationMs` more (see {@link holdJobLockScript});
 * false when the job is another worker's now. Runs in the job's own slot.
 */
export async function holdJobLock(redis: RedisClient, job: LockedJob, { token, lockDurationMs }: JobLockHold): Promise<boolean> {
  const queue = job.queueQualifiedName;
  const id = String(job.id);
  const held = await holdJobLockScript.run(redis, [`${queue}:${id}:lock`, `${queue}:active`, `${queue}:stalled`], [token, Math.max(1, Math.round(lockDurationMs)), id]);
  return held === 1;
}
