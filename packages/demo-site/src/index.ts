export { startDemoSite, type DemoSite } from './demo-site.js';
export { type SiteSpec, type SlowPage, DEFAULT_PAGE_BYTES } from './site-spec.js';
export { type FaultRule } from './fault-rules.js';
export { type HostLoad } from './host-load.js';
export { peakInFlight, type RequestRecord } from './request-log.js';
export { type ReachableOptions } from './reachable.js';
export { createSeededRandom, type SeededRandom } from './seeded-random.js';
export { DemoSiteConfigError, DemoSiteListenError } from './errors.js';
export { startChangingSite, measureFreshness, type ChangingSite, type ChangingSiteOptions, type ChangingPage, type ChangingRequest, type ChangeClass, type FreshnessReport, type ValidatorKind } from './changing-site.js';
