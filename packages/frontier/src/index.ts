export { Frontier, type FrontierOptions, type FrontierSettings, type SlotPlanner, type AddResult, type RejectedUrl } from './frontier.js';
export { enqueueLines, type EnqueueTotals, type EnqueueStreamOptions } from './enqueue-stream.js';
export { frontierKeys } from './keys.js';
