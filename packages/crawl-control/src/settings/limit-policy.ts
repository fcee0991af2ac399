import type { CrawlqConfig } from '@crawlq/config';
import { DEFAULT_ADAPTIVE_PACING, normalizePolicy, type LimitPolicy, type LimitPolicyInput } from '@crawlq/group-limiter';
import { serverPolicyFrom } from './server-rules.js';

/**
 * The fleet-wide politeness policy a config describes. A lease must outlive
 * one request, or a slow response would let a second request in early.
 */
export function limitPolicyFrom(config: CrawlqConfig): LimitPolicy {
  return normalizePolicy(limitPolicyInputFrom(config), 'limitPolicyFrom');
}

function limitPolicyInputFrom(config: CrawlqConfig): LimitPolicyInput {
  return {
    defaults: { rate: config.rate, burst: config.burst, concurrency: config.domainConcurrency },
    rules: config.limitRules.map((rule) => ({
      match: rule.match,
      ...(rule.rate === undefined ? {} : { rate: rule.rate }),
      ...(rule.burst === undefined ? {} : { burst: rule.burst }),
      ...(rule.concurrency === undefined ? {} : { concurrency: rule.concurrency }),
      ...(rule.adaptive === undefined ? {} : { adaptive: rule.adaptive }),
    })),
    safetyMarginMs: config.safetyMargin,
    spacingMargin: config.spacingMargin,
    globalRate: config.globalRate,
    leaseMs: Math.max(config.leaseTime, config.requestTimeout + 1_000),
    backoff429: { baseMs: 1_000, maxMs: 60_000 },
    maxPauseMs: config.maxPause,
    maxMinIntervalMs: config.maxCrawlDelay,
    // --adaptive-recovery is the climb from half pace to full; the latency
    // tolerance keeps the limiter's defaults (DEFAULT_ADAPTIVE_PACING).
    adaptive: {
      ...DEFAULT_ADAPTIVE_PACING,
      enabled: config.adaptive,
      floor: config.adaptiveFloor,
      risePerSecond: 0.5 / (config.adaptiveRecovery / 1_000),
    },
    servers: serverPolicyFrom(config),
  };
}
