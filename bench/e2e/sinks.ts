/**
 * The bench's side of a sink process (sink-process.ts): spawned as a peer (own process group,
 * `setpriv --pdeathsig`, killed on the bench's exit: test/support/peer-process.ts), so no SMSC or
 * receiver outlives the bench, whether it ends normally, fails, or is killed.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { killPeer, spawnPeer } from '../../test/support/peer-process.js';
import type { ReceiverEvents, ReceiverSinkConfig, SinkMessage, SinkProgress, SmscEvents, SmscSinkConfig } from './sink-protocol.js';
import { cpuMsOf } from './stats.js';

const SCRIPT = fileURLToPath(new URL('./sink-process.js', import.meta.url));
const START_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 5_000;

export class SinkProcess {
  progress: SinkProgress = { boundSessions: 0, submitted: 0, receiptsAcknowledged: 0, webhooksAcknowledged: 0, signatureFailures: 0 };
  private waitingForEvents: ((message: Extract<SinkMessage, { kind: 'events' }>) => void) | undefined;
  private exitReason: string | undefined;

  private constructor(
    private readonly child: ChildProcess,
    readonly address: { host: string; port: number; url: string },
  ) {
    child.on('message', (message: SinkMessage) => {
      if (message.kind === 'progress') this.progress = message.progress;
      else if (message.kind === 'events') this.waitingForEvents?.(message);
    });
    child.once('exit', (code, signal) => {
      this.exitReason = `sink process exited (code ${code}, signal ${signal})`;
    });
  }

  static startSmsc(config: SmscSinkConfig): Promise<SinkProcess> {
    return SinkProcess.start('smsc', config);
  }

  static startReceiver(config: ReceiverSinkConfig): Promise<SinkProcess> {
    return SinkProcess.start('receiver', config);
  }

  private static start(role: 'smsc' | 'receiver', config: SmscSinkConfig | ReceiverSinkConfig): Promise<SinkProcess> {
    const child = spawnPeer(process.execPath, [SCRIPT, role, JSON.stringify(config)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        killPeer(child, 'SIGKILL');
        reject(new Error(`${role} sink did not start within ${START_TIMEOUT_MS} ms`));
      }, START_TIMEOUT_MS);
      child.on('message', (message: SinkMessage) => {
        if (message.kind !== 'listening') return;
        clearTimeout(timer);
        resolve(new SinkProcess(child, { host: message.host, port: message.port, url: message.url }));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${role} sink exited with ${code} before listening`));
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Throws when the sink died: a run waiting on its counters would otherwise wait forever. */
  assertAlive(): void {
    if (this.exitReason !== undefined) throw new Error(this.exitReason);
  }

  cpuMs(): number {
    return cpuMsOf(this.child.pid);
  }

  collectSmsc(): Promise<SmscEvents> {
    return this.collect().then((m) => m.smsc ?? { submittedAtMs: [], acknowledgedAtMs: [], acknowledgedRecipients: [] });
  }

  collectReceiver(): Promise<ReceiverEvents> {
    return this.collect().then((m) => m.receiver ?? { acknowledgedAtMs: [], acknowledgedRecipients: [], unidentified: 0 });
  }

  /** Asks the sink to close its listeners and exit; SIGKILL after STOP_GRACE_MS. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    if (this.child.connected) this.child.send({ kind: 'stop' });
    else killPeer(this.child, 'SIGTERM');
    const timer = setTimeout(() => killPeer(this.child, 'SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }

  private collect(): Promise<Extract<SinkMessage, { kind: 'events' }>> {
    this.assertAlive();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('sink did not send its events within 30 s')), 30_000);
      this.waitingForEvents = (message) => {
        clearTimeout(timer);
        this.waitingForEvents = undefined;
        resolve(message);
      };
      this.child.send({ kind: 'collect' });
    });
  }
}

/** A run's SMSC and webhook receiver, a fresh pair per run. */
export interface RunSinks {
  smsc: SinkProcess;
  receiver: SinkProcess;
}

/** Starts both; if the receiver does not start, the SMSC is stopped before the error is thrown. */
export async function startSinks(smscConfig: SmscSinkConfig, receiverConfig: ReceiverSinkConfig): Promise<RunSinks> {
  const smsc = await SinkProcess.startSmsc(smscConfig);
  try {
    return { smsc, receiver: await SinkProcess.startReceiver(receiverConfig) };
  } catch (err) {
    await smsc.stop();
    throw err;
  }
}

/** Stops both (undefined: the run failed before they started). */
export async function stopSinks(sinks: RunSinks | undefined): Promise<void> {
  await Promise.all([sinks?.smsc.stop(), sinks?.receiver.stop()]);
}
