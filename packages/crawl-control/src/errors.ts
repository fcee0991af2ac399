import { conflictMessage, ConfigError, optionLabel, type CommandContext, type DefinitionConflict } from '@crawlq/config';

/**
 * A process was given a fleet-wide option whose value differs from the crawl
 * definition in force. Not retryable: the operator drops the flag or changes
 * the fleet's value with `crawlq config set`.
 */
export class DefinitionConflictError extends ConfigError {
  override readonly name = 'DefinitionConflictError';
  readonly conflicts: readonly DefinitionConflict[];

  /** `context`: the namespace and the command the fix names (see `conflictMessage`). */
  constructor(conflicts: readonly DefinitionConflict[], version: number, context: CommandContext = {}) {
    const first = conflicts[0];
    if (first === undefined) throw new RangeError('DefinitionConflictError needs at least one conflict');
    const more = conflicts.length > 1 ? ` (and ${conflicts.slice(1).map((c) => optionLabel(c.option)).join(', ')})` : '';
    const message = conflictMessage(first, version, context);
    super(optionLabel(first.option), `${message.slice(optionLabel(first.option).length + 2)}${more}`);
    this.conflicts = conflicts;
  }
}
