/**
 * Where in a config file's text a JSON syntax error is, as the line and column an editor shows
 * (both from 1). JSON.parse names only a character offset (`at position 11`), or none at the end of
 * the input; the file's name, line and column are what an operator needs to find the mistake.
 */
export interface TextPosition {
  line: number;
  column: number;
}

/** The line and column of character `offset` of `text`. */
export function positionAt(text: string, offset: number): TextPosition {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: (lines[lines.length - 1] ?? '').length + 1 };
}

/**
 * JSON.parse's message without V8's offset, with the line and column instead:
 * `line 3, column 1: Expected double-quoted property name`. A message naming no position and
 * saying the input ended points after the last character.
 */
export function describeJsonSyntaxError(text: string, error: Error): string {
  // V8: `... in JSON at position 11`, `... after JSON at position 3`; node 22 adds ` (line 2 column 2)`.
  const found = / at position (\d+)(?: \(line \d+ column \d+\))?/.exec(error.message);
  let offset: number | undefined;
  let what = error.message;
  if (found !== null) {
    offset = Number(found[1]);
    what = error.message.replace(found[0], '');
  } else if (/end of JSON input/i.test(error.message)) {
    offset = text.length;
  }
  if (offset === undefined) return what;
  const { line, column } = positionAt(text, offset);
  return `line ${line}, column ${column}: ${what}`;
}
