import { describe, expect, it } from 'vitest';
import { BACKLOG_PRIORITY_STEP } from '../src/lua/backlog-lua.js';
import { FRONTIER_LUA } from '../src/lua/files.js';
import { BLOOM_BLOCK_BITS } from '../src/seen-set-mode.js';

// Numbers the TypeScript and the .lua files must agree on, written in both.
describe("the frontier's Lua", () => {
  it('uses the Bloom block size and the priority step the TypeScript uses', () => {
    expect(FRONTIER_LUA.file('lua/seen-set.lua').text).toContain(`local BLOOM_BLOCK = ${BLOOM_BLOCK_BITS}\n`);
    expect(FRONTIER_LUA.file('lua/backlog.lua').text).toContain(`depth - priority * ${BACKLOG_PRIORITY_STEP}\n`);
  });
});
