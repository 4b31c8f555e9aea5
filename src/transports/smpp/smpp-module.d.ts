/**
 * Types for the parts of the untyped `smpp` package (0.5.1) that smsgate uses. Field names are
 * the SMPP 3.4 names the package uses. Read from node_modules/smpp/lib/{smpp,pdu,defs}.js.
 */
declare module 'smpp' {
  import type { EventEmitter } from 'node:events';
  import type { Server as NetServer, Socket } from 'node:net';

  /** A short_message as the package decodes it: the UDH comes back as IEs without the UDHL octet. */
  export interface DecodedShortMessage {
    udh?: Buffer[];
    message: string | Buffer;
  }

  /** A decoded or to-be-encoded PDU: header fields, mandatory parameters and TLVs by SMPP name. */
  export class PDU {
    constructor(command: string, options?: Record<string, unknown>);
    constructor(buffer: Buffer);
    command: string;
    command_length: number;
    command_id: number;
    command_status: number;
    sequence_number: number;
    [field: string]: unknown;
    isResponse(): boolean;
    response(options?: Record<string, unknown>): PDU;
    toBuffer(): Buffer;
    static maxLength: number;
  }

  /** What Session.send needs of a request or response: it numbers a request, then calls toBuffer(). */
  export interface OutgoingPdu {
    command: string;
    sequence_number: number;
    isResponse(): boolean;
    toBuffer(): Buffer;
  }

  export interface SessionOptions {
    host?: string;
    port?: number;
    tls?: boolean;
    socket?: Socket;
    rejectUnauthorized?: boolean;
    ca?: string | Buffer | Array<string | Buffer>;
    servername?: string;
    [option: string]: unknown;
  }

  export class Session extends EventEmitter {
    constructor(options: SessionOptions);
    socket: Socket;
    sequence: number;
    server?: Server;
    /** Assigns sequence_number when it is 0; returns false when the socket is not writable. */
    send(pdu: OutgoingPdu, responseCallback?: (pdu: PDU) => void, sendCallback?: (pdu: OutgoingPdu) => void): boolean;
    pause(): void;
    resume(): void;
    close(callback?: () => void): void;
    destroy(callback?: () => void): void;
  }

  export class Server extends NetServer {
    sessions: Session[];
  }

  export function connect(options: SessionOptions, listener?: () => void): Session;
  export function createServer(
    options: Record<string, unknown>,
    listener?: (session: Session) => void,
  ): Server;

  export const errors: Readonly<Record<string, number>>;
  export const encodings: {
    readonly ASCII: { encode(value: string): Buffer; decode(value: Buffer): string };
    readonly LATIN1: { encode(value: string): Buffer; decode(value: Buffer): string };
    readonly UCS2: { encode(value: string): Buffer; decode(value: Buffer): string };
  };
}
