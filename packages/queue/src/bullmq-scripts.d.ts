// BullMQ ships each of its Lua scripts, includes resolved, as a CommonJS module
// without typings; crawlq runs one of them inside its own release script.
declare module 'bullmq/dist/cjs/scripts/addPrioritizedJob-9.js' {
  export const addPrioritizedJob: { readonly name: string; readonly content: string; readonly keys: number };
}
