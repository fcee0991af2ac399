import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LIMITER_LUA } from '../src/lua/files.js';
import { ScriptCode } from '../src/lua/script-code.js';

// The scripts return ScriptCode values as numbers; each file's header lists
// the ones it returns ("Codes: 1 Ok, 2 DeniedRate"), checked here against the enum.
describe("the limiter's Lua", () => {
  it('names in each header the ScriptCode values it returns, as the enum has them', () => {
    const files = readdirSync(fileURLToPath(new URL('../src/lua/', import.meta.url))).filter((name) => name.endsWith('.lua'));
    expect(files.length).toBeGreaterThan(10);
    for (const name of files) {
      const { text } = LIMITER_LUA.file(`lua/${name}`);
      const codes = /^ {2}Codes: (.*)$/m.exec(text)?.[1];
      if (codes === undefined) continue;
      for (const entry of codes.split(', ')) {
        const [value, code] = entry.split(' ');
        expect(ScriptCode[code as keyof typeof ScriptCode], `${name}: ${entry}`).toBe(Number(value));
      }
    }
  });
});
