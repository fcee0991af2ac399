// The banner every esbuild bundle of crawlq starts with: CommonJS dependencies
// inside an ES module expect `require`, `__filename` and `__dirname`.
export const ESM_BANNER = [
  "import { createRequire as __crawlqCreateRequire } from 'node:module';",
  "import { fileURLToPath as __crawlqFileURLToPath } from 'node:url';",
  'const require = __crawlqCreateRequire(import.meta.url);',
  'const __filename = __crawlqFileURLToPath(import.meta.url);',
  "const __dirname = __crawlqFileURLToPath(new URL('.', import.meta.url));",
].join('\n');
