/**
 * What every gateway run of bench:e2e and bench:cluster measures the same way, whichever gateway it
 * drives (smsgate serve, a cluster of them, Kannel): the harness's own CPU (the SMSC, the receiver,
 * this driver) and the machine's load over the run, the sinks' events as stages, and the RunFigures
 * built from them, so the runs' figures stay comparable column by column.
 */
import type { ReceiverEvents } from './sink-protocol.js';
import type { SinkProcess } from './sinks.js';
import { loadAverage1m, sinkFigures, stageAt, type RunFigures, type Syscalls } from './stats.js';

export interface HarnessFigures {
  harnessCpuMs: RunFigures['harnessCpuMs'];
  loadAverage: RunFigures['loadAverage'];
}

/** Started right before the first request; `stop()` right after the last webhook. */
export interface HarnessMeter {
  stop(): HarnessFigures;
}

export function startHarnessMeter(smsc: SinkProcess, receiver: SinkProcess): HarnessMeter {
  const loadAtStart = loadAverage1m();
  const smscCpuAtStart = smsc.cpuMs();
  const receiverCpuAtStart = receiver.cpuMs();
  const driverCpuAtStart = process.cpuUsage();
  return {
    stop: () => {
      const smscCpuMs = smsc.cpuMs() - smscCpuAtStart;
      const receiverCpuMs = receiver.cpuMs() - receiverCpuAtStart;
      const driver = process.cpuUsage(driverCpuAtStart);
      return {
        harnessCpuMs: { smsc: smscCpuMs, receiver: receiverCpuMs, driver: (driver.user + driver.system) / 1_000 },
        loadAverage: { atStart: loadAtStart, atEnd: loadAverage1m() },
      };
    },
  };
}

export type SinkFigures = ReturnType<typeof sinkFigures>;

/** Both sinks' events, summed up as stages and lag relative to the run's start. */
export async function collectSinks(smsc: SinkProcess, receiver: SinkProcess, startedAtMs: number): Promise<{ sink: SinkFigures; receiverEvents: ReceiverEvents }> {
  const smscEvents = await smsc.collectSmsc();
  const receiverEvents = await receiver.collectReceiver();
  return { sink: sinkFigures(smscEvents, receiverEvents, startedAtMs), receiverEvents };
}

/** What any gateway's run measured. */
export interface GatewayRun {
  label: string;
  setup: string;
  messages: number;
  /** Ms after the start: the last request answered. */
  acceptedAtMs: number;
  /** Ms after the start: the gateway's "campaign ready" log line; undefined where there is none. */
  readyAtMs: number | undefined;
  startedAtMs: number;
  finishedAtMs: number;
  sink: SinkFigures;
  harness: HarnessFigures;
  gatewayCpuMs: number;
  syscalls: Syscalls;
  peakRssBytes: number;
  notes: string[];
}

/** The figures only a single smsgate serve gives (its main thread, /metrics, API probe, profile). */
export type OwnFigures = Pick<RunFigures, 'mainThread' | 'eventLoop' | 'ownWebhookLag' | 'api' | 'profile'>;

const NO_OWN_FIGURES: OwnFigures = { mainThread: undefined, eventLoop: undefined, ownWebhookLag: undefined, api: undefined, profile: undefined };

export function runFigures(run: GatewayRun, own: OwnFigures = NO_OWN_FIGURES): RunFigures {
  return {
    label: run.label,
    setup: run.setup,
    messages: run.messages,
    stages: {
      accepted: stageAt(run.messages, run.acceptedAtMs),
      ready: run.readyAtMs === undefined ? undefined : stageAt(run.messages, run.readyAtMs),
      submitted: run.sink.submitted,
      receipts: run.sink.receipts,
      webhooks: run.sink.webhooks,
    },
    endToEndMs: run.finishedAtMs - run.startedAtMs,
    lag: run.sink.lag,
    gatewayCpuMs: run.gatewayCpuMs,
    syscalls: run.syscalls,
    mainThread: own.mainThread,
    eventLoop: own.eventLoop,
    ownWebhookLag: own.ownWebhookLag,
    peakRssBytes: run.peakRssBytes,
    harnessCpuMs: run.harness.harnessCpuMs,
    api: own.api,
    profile: own.profile,
    loadAverage: run.harness.loadAverage,
    notes: run.notes,
  };
}
