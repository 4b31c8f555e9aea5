/**
 * JSON.parse for large request bodies without stalling the event loop (one 62 MiB
 * POST blocked the loop for 3.4 s). A structural scan, done a slice of bytes at a time, finds the
 * members of a top-level object and the elements of every array at the first two levels; each
 * element (or a run of small ones) is then handed to JSON.parse, yielding to the event loop between
 * slices. JSON.parse still does all the real validation of what it is given; the scan checks the
 * structure between the pieces (commas, colons, brackets, whitespace) itself, so every input gets
 * the same verdict as JSON.parse(text) would give, and the same value (later duplicate keys win,
 * `__proto__` is an own property).
 *
 * Bytes are UTF-8; a leading BOM is skipped; invalid UTF-8 anywhere is an error, as with a fatal
 * TextDecoder. Errors are thrown as JsonSyntaxError with a message and no input echoed.
 */
import { TextDecoder } from 'node:util';
import { yieldToEventLoop } from '../common/loop-turns.js';

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly kind: 'syntax' | 'encoding' | 'empty',
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

/**
 * Bytes scanned between yields, and the byte size of one JSON.parse call's input. 64 KiB of scan is
 * about 0.6 ms (256 KiB was 2-3 ms): a turn holds one slice (src/common/loop-turns.ts) and the gateway
 * accepts one new connection per turn, so the slice length bounds the accept rate.
 */
export const SCAN_SLICE_BYTES = 64 * 1024;
export const PARSE_SLICE_BYTES = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

function isJsonWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** A value's byte range [start, end) and, for a split container, its parts. */
interface ValueNode {
  start: number;
  end: number;
  /** For an object split into members: [key range, value] pairs. */
  members?: Array<{ keyStart: number; keyEnd: number; value: ValueNode }>;
  /** For an array split into elements. */
  elements?: ValueNode[];
  /**
   * For an array whose elements are never split (one below the top level): [start, end) byte pairs
   * in a flat array of small integers, which V8 stores unboxed; a node object per element would be
   * millions of objects for the garbage collector on a 60 MiB body.
   */
  bounds?: number[];
}

type Yield = () => Promise<void>;

/** Turns shared with every other sliced job (src/common/loop-turns.ts), so concurrent bodies take turns. */
const defaultYield: Yield = yieldToEventLoop;

export async function parseJsonInSlices(bytes: Uint8Array, yieldToLoop: Yield = defaultYield): Promise<unknown> {
  const scanner = new Scanner(bytes, yieldToLoop);
  const root = await scanner.scanDocument();
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const builder = new Builder(bytes, decoder, yieldToLoop);
  return builder.build(root);
}

/**
 * An array member of the top-level object left unparsed (parseJsonLazily): its element count is
 * known from the scan, and its elements are parsed a run at a time as they are iterated, so a
 * consumer that keeps only a digest of each run never holds millions of parsed objects at once.
 */
export class LazyJsonArray {
  constructor(
    readonly length: number,
    private readonly produceRuns: () => AsyncGenerator<JsonRun>,
  ) {}

  /** The elements in order, in runs of up to PARSE_SLICE_BYTES of JSON, yielding to the event loop between runs. */
  runs(): AsyncGenerator<JsonRun> {
    return this.produceRuns();
  }
}

/** A run of a LazyJsonArray's elements: their values, and the array text they were parsed from. */
export interface JsonRun {
  values: unknown[];
  /** `[` + the elements' bytes as sent, commas and whitespace included + `]`: JSON.parse(json) gives `values`. */
  json: string;
}

/**
 * Like parseJsonInSlices, except that an array member of a top-level object whose key `isLazy`
 * accepts is returned as a LazyJsonArray instead of an array. Syntax errors anywhere are found by
 * the scan, before any value is returned; a piece JSON.parse refuses inside a lazy array surfaces
 * when that run is iterated.
 */
export async function parseJsonLazily(bytes: Uint8Array, isLazy: (key: string) => boolean, yieldToLoop: Yield = defaultYield): Promise<unknown> {
  const scanner = new Scanner(bytes, yieldToLoop);
  const root = await scanner.scanDocument();
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const builder = new Builder(bytes, decoder, yieldToLoop);
  return builder.build(root, isLazy);
}

/**
 * Walks the bytes once. Levels 0 and 1 (the document and the members/elements of a top-level
 * container) are split into nodes; anything deeper is skipped over by tracking strings and
 * bracket depth, and left to JSON.parse.
 */
class Scanner {
  private pos = 0;
  private sinceYield = 0;
  /** Where skipOpaqueValue is inside a value it paused in (-1: not paused), and at what depth. */
  private opaqueStart = -1;
  private opaqueDepth = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly yieldToLoop: Yield,
  ) {}

  async scanDocument(): Promise<ValueNode> {
    const b = this.bytes;
    if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) this.pos = 3;
    this.skipWhitespace();
    if (this.pos >= b.length) throw new JsonSyntaxError('the request body is empty', 'empty');
    const root = await this.scanValue(0);
    this.skipWhitespace();
    if (this.pos < b.length) throw this.unexpected();
    return root;
  }

  private async scanValue(level: number): Promise<ValueNode> {
    const byte = this.bytes[this.pos];
    if (level <= 1 && byte === OPEN_BRACE) return this.scanObject(level);
    if (level <= 1 && byte === OPEN_BRACKET) return this.scanArray(level);
    const start = this.pos;
    while (!this.skipOpaqueValue()) await this.yieldToLoop();
    return { start, end: this.pos };
  }

  private async scanObject(level: number): Promise<ValueNode> {
    const start = this.pos;
    this.pos++;
    const members: NonNullable<ValueNode['members']> = [];
    this.skipWhitespace();
    if (this.bytes[this.pos] === CLOSE_BRACE) {
      this.pos++;
      return { start, end: this.pos, members };
    }
    for (;;) {
      this.skipWhitespace();
      if (this.bytes[this.pos] !== QUOTE) throw this.unexpected();
      const keyStart = this.pos;
      this.skipString();
      const keyEnd = this.pos;
      this.skipWhitespace();
      if (this.bytes[this.pos] !== COLON) throw this.unexpected();
      this.pos++;
      this.skipWhitespace();
      const value = await this.scanValue(level + 1);
      members.push({ keyStart, keyEnd, value });
      this.skipWhitespace();
      const next = this.bytes[this.pos];
      this.pos++;
      if (next === CLOSE_BRACE) return { start, end: this.pos, members };
      if (next !== COMMA) {
        this.pos--;
        throw this.unexpected();
      }
      await this.maybeYield();
    }
  }

  private async scanArray(level: number): Promise<ValueNode> {
    const start = this.pos;
    this.pos++;
    // Elements one level below are split further only at the top level.
    const elements: ValueNode[] = [];
    const bounds: number[] = [];
    const done = (): ValueNode => (level === 0 ? { start, end: this.pos, elements } : { start, end: this.pos, bounds });
    this.skipWhitespace();
    if (this.bytes[this.pos] === CLOSE_BRACKET) {
      this.pos++;
      return done();
    }
    for (;;) {
      this.skipWhitespace();
      if (level === 0) elements.push(await this.scanValue(level + 1));
      else {
        // Elements below the first level are never split: skipped in place, awaiting only when a
        // slice is used up (an await per element was two promises per recipient, a gigabyte of
        // garbage for a million-recipient body).
        const elementStart = this.pos;
        while (!this.skipOpaqueValue()) await this.yieldToLoop();
        bounds.push(elementStart, this.pos);
      }
      this.skipWhitespace();
      const next = this.bytes[this.pos];
      this.pos++;
      if (next === CLOSE_BRACKET) return done();
      if (next !== COMMA) {
        this.pos--;
        throw this.unexpected();
      }
      if (this.sinceYield >= SCAN_SLICE_BYTES) await this.maybeYield();
    }
  }

  /**
   * Skips one value without splitting it: a string, or a run of bytes up to the delimiter that
   * closes it at this depth. Its content is JSON.parse's to judge. Returns false when a slice of
   * bytes was used up inside the value: the caller yields to the event loop and calls it again,
   * and it goes on where it stopped (opaqueDepth and opaqueStart keep its place).
   */
  private skipOpaqueValue(): boolean {
    const b = this.bytes;
    if (this.opaqueStart === -1 && b[this.pos] === QUOTE) {
      this.skipString();
      return true;
    }
    let depth = this.opaqueDepth;
    if (this.opaqueStart === -1) this.opaqueStart = this.pos;
    const start = this.opaqueStart;
    while (this.pos < b.length) {
      const byte = b[this.pos]!;
      if (byte === QUOTE) {
        this.skipString();
        continue;
      }
      if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
      else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        if (depth === 0) break;
        depth--;
        if (depth === 0) {
          this.pos++;
          break;
        }
      } else if (depth === 0 && (byte === COMMA || isJsonWhitespace(byte))) break;
      this.pos++;
      if (++this.sinceYield >= SCAN_SLICE_BYTES) {
        this.sinceYield = 0;
        this.opaqueDepth = depth;
        return false;
      }
    }
    this.opaqueStart = -1;
    this.opaqueDepth = 0;
    if (this.pos === start) throw this.unexpected();
    if (depth > 0) throw new JsonSyntaxError('unexpected end of JSON input', 'syntax');
    return true;
  }

  /** From an opening quote to just past its closing quote. */
  private skipString(): void {
    const b = this.bytes;
    let i = this.pos + 1;
    for (;;) {
      const close = b.indexOf(QUOTE, i);
      if (close === -1) throw new JsonSyntaxError('unterminated string in JSON', 'syntax');
      // An odd run of backslashes before the quote escapes it.
      let backslashes = 0;
      for (let j = close - 1; j > this.pos && b[j] === BACKSLASH; j--) backslashes++;
      if (backslashes % 2 === 0) {
        this.sinceYield += close + 1 - this.pos;
        this.pos = close + 1;
        return;
      }
      i = close + 1;
    }
  }

  private skipWhitespace(): void {
    const b = this.bytes;
    while (this.pos < b.length && isJsonWhitespace(b[this.pos]!)) this.pos++;
  }

  private async maybeYield(): Promise<void> {
    if (this.sinceYield >= SCAN_SLICE_BYTES) {
      this.sinceYield = 0;
      await this.yieldToLoop();
    }
  }

  private unexpected(): JsonSyntaxError {
    if (this.pos >= this.bytes.length) return new JsonSyntaxError('unexpected end of JSON input', 'syntax');
    const byte = this.bytes[this.pos]!;
    const shown = byte >= 0x20 && byte < 0x7f ? `'${String.fromCharCode(byte)}'` : `byte 0x${byte.toString(16).padStart(2, '0')}`;
    return new JsonSyntaxError(`unexpected ${shown} at byte ${this.pos}`, 'syntax');
  }
}

/** Turns the scanned nodes into values, a JSON.parse call per piece, yielding between slices. */
class Builder {
  private sinceYield = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly decoder: TextDecoder,
    private readonly yieldToLoop: Yield,
  ) {}

  async build(node: ValueNode, isLazy?: (key: string) => boolean): Promise<unknown> {
    if (node.members !== undefined) {
      const object: Record<string, unknown> = {};
      for (const member of node.members) {
        const key = this.parse(member.keyStart, member.keyEnd) as string;
        const bounds = member.value.bounds;
        const value = isLazy !== undefined && bounds !== undefined && isLazy(key)
          ? new LazyJsonArray(bounds.length / 2, () => this.flatArrayRuns(bounds))
          : await this.build(member.value);
        // defineProperty, as JSON.parse does: `__proto__` becomes an own property, not the prototype.
        Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
      }
      return object;
    }
    if (node.elements !== undefined) return this.buildArray(node.elements);
    if (node.bounds !== undefined) return this.buildFlatArray(node.bounds);
    return this.parse(node.start, node.end);
  }

  /** Runs of adjacent scalar or unsplit elements are parsed together as one array text. */
  private async buildArray(elements: readonly ValueNode[]): Promise<unknown[]> {
    const out: unknown[] = new Array(elements.length);
    let i = 0;
    while (i < elements.length) {
      const first = elements[i]!;
      if (first.members !== undefined || first.elements !== undefined) {
        out[i] = await this.build(first);
        i++;
        continue;
      }
      let last = i;
      while (
        last + 1 < elements.length
        && elements[last + 1]!.members === undefined
        && elements[last + 1]!.elements === undefined
        && elements[last + 1]!.end - first.start <= PARSE_SLICE_BYTES
      ) last++;
      // The bytes from the first element's start to the last one's end are the elements and the
      // commas between them: as an array text they parse to exactly those elements.
      const run = this.parseArrayRun(first.start, elements[last]!.end);
      for (let k = 0; k < run.length; k++) out[i + k] = run[k];
      i = last + 1;
      await this.maybeYield();
    }
    return out;
  }

  /** Elements given as [start, end) pairs, none split: parsed in runs of up to PARSE_SLICE_BYTES. */
  private async buildFlatArray(bounds: readonly number[]): Promise<unknown[]> {
    const out: unknown[] = [];
    for await (const run of this.flatArrayRuns(bounds)) for (const value of run.values) out.push(value);
    return out;
  }

  private async *flatArrayRuns(bounds: readonly number[]): AsyncGenerator<JsonRun> {
    const count = bounds.length / 2;
    let i = 0;
    while (i < count) {
      const runStart = bounds[2 * i]!;
      let last = i;
      while (last + 1 < count && bounds[2 * (last + 1) + 1]! - runStart <= PARSE_SLICE_BYTES) last++;
      yield this.parseArrayRunWithText(runStart, bounds[2 * last + 1]!);
      i = last + 1;
      await this.maybeYield();
    }
  }

  private parseArrayRun(start: number, end: number): unknown[] {
    return this.parseArrayRunWithText(start, end).values;
  }

  private parseArrayRunWithText(start: number, end: number): JsonRun {
    this.sinceYield += end - start;
    const json = `[${this.decode(start, end)}]`;
    try {
      return { values: JSON.parse(json) as unknown[], json };
    } catch (err) {
      throw new JsonSyntaxError(err instanceof Error ? err.message : String(err), 'syntax');
    }
  }

  private parse(start: number, end: number): unknown {
    this.sinceYield += end - start;
    const text = this.decode(start, end);
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      throw new JsonSyntaxError(err instanceof Error ? err.message : String(err), 'syntax');
    }
  }

  private decode(start: number, end: number): string {
    try {
      return this.decoder.decode(this.bytes.subarray(start, end));
    } catch {
      throw new JsonSyntaxError('the request body is not valid UTF-8', 'encoding');
    }
  }

  private async maybeYield(): Promise<void> {
    if (this.sinceYield >= PARSE_SLICE_BYTES) {
      this.sinceYield = 0;
      await this.yieldToLoop();
    }
  }
}
