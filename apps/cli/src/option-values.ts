import type { Command, Option } from 'commander';
import { UsageError } from './errors.js';

/**
 * Commander hands an option that takes a value the next word, whatever it is:
 * `crawl SEED --user-agent --max-depth 1` crawled with the user agent
 * "--max-depth" and the default depth. Before parsing, this refuses an
 * option whose next word looks like a flag, or that ends the command line.
 *
 * The rule, kept simple (docs/01-getting-started.md, "Configuration comes from..."): after an
 * option that takes a value, a word starting with `--`, or with `-` and a
 * letter, is a flag. A value that really starts that way is written
 * `--user-agent=-x-`. `-` alone (stdin) and `-1` stay values: a negative
 * number or duration is then refused by the option's own check.
 *
 * Which options take a value comes from the commands' own definitions, along
 * the chain of (sub)commands the words name.
 * @throws UsageError naming the option as typed
 */
export function checkOptionValues(program: Command, argv: readonly string[]): void {
  let command = program;
  const chain: Command[] = [program];
  for (let index = 0; index < argv.length; index++) {
    const word = argv[index] ?? '';
    if (word === '--') return; // the rest are arguments
    if (word.startsWith('-')) {
      if (!takesValue(chain, word)) continue;
      const next = argv[index + 1];
      if (next === undefined) throw new UsageError(word, 'missing its value (nothing follows it)');
      if (looksLikeFlag(next)) throw new UsageError(word, `missing its value (the next word, ${next}, is a flag)`);
      index++; // skip the value: it may spell a subcommand's name
      continue;
    }
    const sub = command.commands.find((candidate) => candidate.name() === word || candidate.aliases().includes(word));
    if (sub !== undefined) {
      command = sub;
      chain.push(sub);
    }
  }
}

/** `--max-depth <value>` yes; `--json` and `--ignore-robots [value]` (takes a value only if one follows) no. */
function takesValue(chain: readonly Command[], word: string): boolean {
  return chain.some((command) => command.options.some((option: Option) => option.required && (option.long === word || option.short === word)));
}

function looksLikeFlag(word: string): boolean {
  return /^-(-|[A-Za-z])/.test(word);
}
