/**
 * `smsgate webhook list | head`: when the reader closes the pipe early, the next write fails with
 * EPIPE, emitted on the stream as an 'error' that would otherwise crash with a stack trace. The
 * reader chose to stop reading, so the command ends at once, quietly, with exit code 0 (what was
 * left to print has no one to read it). Any other stream error is still a failure.
 */
export function exitQuietlyOnClosedPipe(streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(0);
      throw err;
    });
  }
}
