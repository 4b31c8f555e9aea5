/**
 * Counts the writes net.Socket hands to its handle: every `_write` and `_writev` of a stream socket
 * goes through Socket#_writeGeneric, which issues exactly one libuv write request (one write or
 * writev syscall when the kernel takes the bytes, as it does on loopback). Chunks are the buffers
 * in that one request. Only the sockets `select` picks are counted; restore() puts Node's own back.
 */
import { Socket } from 'node:net';

export interface SocketWriteTally {
  /** Write requests handed to the handle (syscalls). */
  writes: number;
  /** Buffers in them (a writev carries several). */
  chunks: number;
  bytes: number;
}

type WriteGeneric = (this: Socket, writev: boolean, data: unknown, encoding: string, cb: (err?: Error | null) => void) => unknown;

interface SocketInternals {
  _writeGeneric: WriteGeneric;
}

export interface SocketWriteCounter {
  readonly tally: SocketWriteTally;
  /** Zeroes the tally (e.g. after the bind's own writes). */
  reset(): void;
  restore(): void;
}

export function countSocketWrites(select: (socket: Socket) => boolean): SocketWriteCounter {
  const proto = Socket.prototype as unknown as SocketInternals;
  const original = proto._writeGeneric;
  if (typeof original !== 'function') throw new Error('this Node has no Socket#_writeGeneric: the write counter needs updating');
  const tally: SocketWriteTally = { writes: 0, chunks: 0, bytes: 0 };
  proto._writeGeneric = function (this: Socket, writev, data, encoding, cb) {
    // A write while connecting is only parked; Node calls this again with it once connected.
    if (!this.connecting && select(this)) {
      tally.writes += 1;
      const chunks = writev ? (data as Array<{ chunk: Buffer | string }>).map((entry) => entry.chunk) : [data as Buffer | string];
      tally.chunks += chunks.length;
      for (const chunk of chunks) tally.bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk, encoding as BufferEncoding) : chunk.length;
    }
    return original.call(this, writev, data, encoding, cb);
  };
  return {
    tally,
    reset() {
      tally.writes = 0;
      tally.chunks = 0;
      tally.bytes = 0;
    },
    restore() {
      proto._writeGeneric = original;
    },
  };
}
