-- The Lua crawlq runs inside Redis (5.0 to 7.x: Lua 5.1 with Redis' own
-- libraries), checked by test/lua-lint.test.ts, one file per script as
-- Redis runs it: its includes, then its body.
std = "lua51"
read_globals = { "redis", "KEYS", "ARGV", "cjson", "cmsgpack", "struct", "bit" }
-- The TypeScript around the scripts has no line limit either.
max_line_length = false
