import { describe, expect, it } from 'vitest';
import { rejectExtraArguments, unknownWordError, UsageError } from '../../src/cli/args.js';

describe('shared usage errors of the CLI commands', () => {
  it('refuses the first extra argument by name, and accepts none', () => {
    expect(() => rejectExtraArguments([], 'usage')).not.toThrow();
    expect(() => rejectExtraArguments(['one', 'two'], 'usage')).toThrow(new UsageError("unexpected argument 'one'", 'usage'));
  });

  it('names a missing or unknown subcommand or action, listing the expected ones when given', () => {
    expect(unknownWordError('subcommand', undefined, 'u')).toMatchObject({ message: 'missing subcommand', usageLine: 'u' });
    expect(unknownWordError('subcommand', 'count', 'u')).toMatchObject({ message: "unknown subcommand 'count'", usageLine: 'u' });
    expect(unknownWordError('action', undefined, 'u', 'create or revoke')).toMatchObject({ message: 'missing action: create or revoke' });
    expect(unknownWordError('action', 'delete', 'u', 'create or revoke')).toMatchObject({ message: "unknown action 'delete'" });
    expect(unknownWordError('action', 'x', 'u')).toBeInstanceOf(UsageError);
  });
});
