/**
 * Reassembles concatenated incoming SMS (TS 23.040 §9.2.3.24.1: same originator, reference and
 * total) before they are handed on as one message. Each part's caller waits until the whole
 * message was handled, so no part is deleted from the SIM (or acknowledged) before the message is
 * stored. A message whose parts stop coming is handed on incomplete after `timeoutMs`, with the
 * missing part numbers logged: never dropped.
 */
import type { ConcatInfo } from '../../pdu/index.js';

export interface InboundPart {
  device: string;
  from: string;
  concat: ConcatInfo;
  text: string;
  receivedAt: string;
  hex: string;
}

export interface AssembledMessage {
  device: string;
  from: string;
  text: string;
  /** The first part's time stamp. */
  receivedAt: string;
  /** Each part's PDU hex, in part order, one per line. */
  raw: string;
  /** Part numbers that never arrived (empty when complete). */
  missing: number[];
}

interface Group {
  parts: Map<number, InboundPart>;
  total: number;
  waiters: { resolve(): void; reject(err: unknown): void }[];
  timer: NodeJS.Timeout;
}

export class InboundAssembler {
  private readonly groups = new Map<string, Group>();

  constructor(
    private readonly deliver: (message: AssembledMessage) => Promise<void>,
    private readonly timeoutMs: number,
  ) {}

  get pendingGroups(): number {
    return this.groups.size;
  }

  /** Resolves once the message this part belongs to has been delivered (rejects if delivery failed). */
  add(part: InboundPart): Promise<void> {
    const key = [part.device, part.from, part.concat.referenceBits, part.concat.reference, part.concat.total].join('\u0000');
    let group = this.groups.get(key);
    if (group === undefined) {
      const created: Group = {
        parts: new Map(),
        total: part.concat.total,
        waiters: [],
        timer: setTimeout(() => void this.flush(key), this.timeoutMs),
      };
      created.timer.unref();
      this.groups.set(key, created);
      group = created;
    }
    group.parts.set(part.concat.sequence, part);
    const done = new Promise<void>((resolve, reject) => group.waiters.push({ resolve, reject }));
    if (group.parts.size >= group.total) void this.flush(key);
    return done;
  }

  /** Hands every incomplete message on now (transport stopping). */
  async flushAll(): Promise<void> {
    await Promise.all([...this.groups.keys()].map((key) => this.flush(key)));
  }

  private async flush(key: string): Promise<void> {
    const group = this.groups.get(key);
    if (group === undefined) return;
    this.groups.delete(key);
    clearTimeout(group.timer);
    const ordered = [...group.parts.values()].sort((a, b) => a.concat.sequence - b.concat.sequence);
    const first = ordered[0] as InboundPart;
    const missing: number[] = [];
    for (let sequence = 1; sequence <= group.total; sequence++) if (!group.parts.has(sequence)) missing.push(sequence);
    try {
      await this.deliver({
        device: first.device,
        from: first.from,
        text: ordered.map((p) => p.text).join(''),
        receivedAt: first.receivedAt,
        raw: ordered.map((p) => p.hex).join('\n'),
        missing,
      });
      for (const waiter of group.waiters) waiter.resolve();
    } catch (err) {
      for (const waiter of group.waiters) waiter.reject(err);
    }
  }
}
