import { ConfigError } from '@crawlq/config';

/**
 * A path an option names that cannot be used, as one line naming the option
 * (exit 2): `--file: cannot read /x/seeds.txt (ENOENT: no such file or directory)`,
 * `refused` being `cannot read /x/seeds.txt`.
 * Node's own message says the path again after a comma; it is said once here.
 */
export function pathError(option: string, refused: string, error: unknown): ConfigError {
  const { code, message } = error as NodeJS.ErrnoException;
  const reason = code !== undefined && message.startsWith(`${code}: `) ? (message.split(', ')[0] ?? message) : message;
  return new ConfigError(option, `${refused} (${reason})`, { cause: error });
}
