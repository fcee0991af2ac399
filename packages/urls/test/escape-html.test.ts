import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../src/index.js';

describe('escapeHtml', () => {
  it('escapes markup, both quote kinds and backticks, and leaves other text alone', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(escapeHtml('`x` café')).toBe('&#96;x&#96; café');
  });
});
