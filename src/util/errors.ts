/**
 * An error the user can fix (bad flag, missing file, port in use): the CLI prints its message
 * without a stack trace and exits with `exitCode`. Anything else that is thrown is a bug or an
 * unexpected I/O failure and is printed in full.
 */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'UserError';
  }
}

/** A command line that does not parse: unknown command or flag, missing argument. Exit code 2. */
export class UsageError extends UserError {
  constructor(message: string) {
    super(message, 2);
    this.name = 'UsageError';
  }
}
