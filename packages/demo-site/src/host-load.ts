import { DemoSiteConfigError } from './errors.js';

/** How one host of the site answers under load (see `SiteSpec.load`). */
export interface HostLoad {
  /**
   * Each answer waits this long times the requests in flight at the host when
   * it arrived, itself included: a server whose latency grows with its load
   * (one request alone: this long; eight at once: eight times as long).
   */
  readonly latencyPerInFlightMs?: number;
  /**
   * A request that arrives when more than `max` requests arrived at the host
   * within the last `durationMs` (itself and refused ones included) is
   * answered `status` at once: a server that sheds load above a rate.
   */
  readonly shedAbove?: { readonly max: number; readonly durationMs: number; readonly status?: number };
}

/** What the load model says about one arriving request. */
export interface LoadVerdict {
  /** Added to the answer's delay. */
  readonly delayMs: number;
  /** Answer this status at once instead (load shed). */
  readonly shedStatus?: number;
}

/** Tracks each loaded host's requests in flight and recent arrivals. */
export class HostLoadBook {
  readonly #load: ReadonlyMap<string, HostLoad>;
  readonly #inFlight = new Map<string, number>();
  readonly #arrivals = new Map<string, number[]>();

  constructor(load: ReadonlyMap<string, HostLoad>) {
    this.#load = load;
  }

  /** A request arrived at `host` (at `now`, ms); call `leave` once its answer is done. */
  arrive(host: string, now: number): LoadVerdict {
    const load = this.#load.get(host);
    if (load === undefined) return { delayMs: 0 };
    const inFlight = (this.#inFlight.get(host) ?? 0) + 1;
    this.#inFlight.set(host, inFlight);
    const shed = load.shedAbove;
    if (shed !== undefined) {
      const arrivals = (this.#arrivals.get(host) ?? []).filter((at) => at > now - shed.durationMs);
      arrivals.push(now);
      this.#arrivals.set(host, arrivals);
      if (arrivals.length > shed.max) return { delayMs: 0, shedStatus: shed.status ?? 503 };
    }
    return { delayMs: (load.latencyPerInFlightMs ?? 0) * inFlight };
  }

  leave(host: string): void {
    const inFlight = this.#inFlight.get(host);
    if (inFlight !== undefined) this.#inFlight.set(host, Math.max(0, inFlight - 1));
  }
}

/** Checks `SiteSpec.load`. @throws {DemoSiteConfigError} naming the first bad field */
export function resolveHostLoad(load: Readonly<Record<string, HostLoad>> | undefined, hosts: ReadonlySet<string>): Map<string, HostLoad> {
  const resolved = new Map<string, HostLoad>();
  for (const [host, spec] of Object.entries(load ?? {})) {
    const field = `load.${host}`;
    if (!hosts.has(host)) throw new DemoSiteConfigError(field, `${host} is not one of the site's hosts`);
    const latency = spec.latencyPerInFlightMs;
    if (latency !== undefined && !(Number.isFinite(latency) && latency >= 0)) {
      throw new DemoSiteConfigError(`${field}.latencyPerInFlightMs`, `must be a non-negative number, got ${String(latency)}`);
    }
    const shed = spec.shedAbove;
    if (shed !== undefined) {
      if (!Number.isInteger(shed.max) || shed.max < 1) throw new DemoSiteConfigError(`${field}.shedAbove.max`, `must be an integer of 1 or more, got ${String(shed.max)}`);
      if (!(Number.isFinite(shed.durationMs) && shed.durationMs > 0)) throw new DemoSiteConfigError(`${field}.shedAbove.durationMs`, `must be a positive number, got ${String(shed.durationMs)}`);
      if (shed.status !== undefined && !(Number.isInteger(shed.status) && shed.status >= 400 && shed.status <= 599)) {
        throw new DemoSiteConfigError(`${field}.shedAbove.status`, `must be an integer from 400 to 599, got ${String(shed.status)}`);
      }
    }
    resolved.set(host, spec);
  }
  return resolved;
}
