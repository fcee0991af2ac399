import { canonicalJson, parseDefinitionValues, type CrawlDefinition, type DefinitionValues } from '@crawlq/config';
import { defineLuaScript, stateKeyPrefix, type RedisClient } from '@crawlq/redis';
import { CONTROL_LUA } from './lua/files.js';

/** What the compare-and-set answered: stored as the next version, or another writer came first. */
type WriteReply = { readonly stored: true; readonly version: number; readonly setAtMs: number } | { readonly stored: false };

/**
 * Compare-and-set of the definition: stores it only if the version is still
 * the one the writer read (0 = none yet), so two producers racing cannot lose
 * each other's change silently, and the first worker to publish wins.
 * setAt is the Redis server's clock in whole ms, so writers with skewed clocks agree.
 * Its KEYS, ARGV and reply: `lua/write-definition.lua`.
 */
const writeDefinitionScript = defineLuaScript({
  name: 'write-definition',
  keys: 1,
  file: CONTROL_LUA.file('lua/write-definition.lua'),
  decode: (reply): WriteReply => {
    if (Array.isArray(reply) && reply[0] === 0) return { stored: false };
    if (Array.isArray(reply) && reply[0] === 1 && typeof reply[1] === 'number' && typeof reply[2] === 'number') {
      return { stored: true, version: reply[1], setAtMs: reply[2] };
    }
    throw new Error(`write-definition: unexpected script reply ${JSON.stringify(reply)}`);
  },
});

/** Identifies one stored version cheaply: the number and its time (a cleared namespace restarts the numbers). */
export type DefinitionStamp = string;

/** The crawl definition of one namespace in Redis. */
export class DefinitionStore {
  readonly #redis: RedisClient;
  readonly #key: string;

  constructor(redis: RedisClient, namespace: string) {
    this.#redis = redis;
    this.#key = `${stateKeyPrefix(namespace)}:definition`;
  }

  /** The definition in force, or null when no process has stored one in this namespace. */
  async read(): Promise<CrawlDefinition | null> {
    const [json, version, setBy, setAt] = await this.#redis.hmget(this.#key, 'json', 'version', 'setBy', 'setAt');
    if (!json || !version) return null;
    return {
      version: Number(version),
      setBy: setBy ?? 'unknown',
      setAt: new Date(Number(setAt ?? 0)).toISOString(),
      values: parseDefinitionValues(JSON.parse(json)),
    };
  }

  /** One round trip that changes whenever the definition does: what workers poll. */
  async stamp(): Promise<DefinitionStamp> {
    const [version, setAt] = await this.#redis.hmget(this.#key, 'version', 'setAt');
    return stampOf(version, setAt);
  }

  /** Stores `values` as the next version if the stored version is still `expectedVersion`; null if another writer came first. */
  async write(values: DefinitionValues, expectedVersion: number, setBy: string): Promise<CrawlDefinition | null> {
    const reply = await writeDefinitionScript.run(this.#redis, [this.#key], [expectedVersion, canonicalJson(values), setBy]);
    if (!reply.stored) return null;
    return { version: reply.version, setBy, setAt: new Date(reply.setAtMs).toISOString(), values };
  }
}

/** The stamp of a definition read in full, comparable with `DefinitionStore.stamp()`. */
export function stampOfDefinition(definition: CrawlDefinition | null): DefinitionStamp {
  return definition === null ? stampOf(null, null) : stampOf(String(definition.version), String(Date.parse(definition.setAt)));
}

function stampOf(version: string | null | undefined, setAt: string | null | undefined): DefinitionStamp {
  return `${version ?? '0'}@${setAt ?? '0'}`;
}
