/**
 * One progress line on a terminal, rewritten in place, for long admin work ("Long
 * admin work (backup, replay of many events) shows progress on a TTY"). Off the terminal (a pipe, a
 * log file, a cron job) there is no progress at all, so scripted output stays the result alone.
 */
export interface TtyProgress {
  /** Replaces the progress line with `line`. */
  show(line: string): void;
  /** Ends the progress line so the result starts on a line of its own. */
  end(): void;
}

/** A progress line on `stream`, or undefined when `stream` is not a terminal. */
export function ttyProgress(stream: NodeJS.WriteStream = process.stderr): TtyProgress | undefined {
  if (stream.isTTY !== true) return undefined;
  let shown = false;
  return {
    show(line) {
      stream.write(`\r${line}`);
      shown = true;
    },
    end() {
      if (shown) stream.write('\n');
    },
  };
}
