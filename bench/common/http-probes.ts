/**
 * HTTP helpers of the benches that load a gateway in another process: a raw POST, a GET, and the
 * open-loop `/health` probes (every interval whether or not the last one was answered, so a stall
 * shows in every probe it delays), in two modes at once: a new connection per probe, as a load
 * balancer's health check does (it measures how fast the gateway accepts: libuv accepts one
 * connection per loop turn), and kept-alive connections, as a monitoring agent does.
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

export interface Answer {
  status: number;
  text: string;
  ms: number;
}

export function post(port: number, path: string, token: string, body: Buffer): Promise<Answer> {
  const startedMs = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers: {
      authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': body.length,
    } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, ms: performance.now() - startedMs }));
    });
    req.on('error', (err) => reject(new Error(`POST ${path}: ${err.message}`)));
    req.end(body);
  });
}

export function get(agent: Agent, port: number, path: string, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** One probe stream's results: latencies and start times (performance.now()) of the answered probes. */
export interface ProbeMode {
  name: string;
  agent: Agent;
  latenciesMs: number[];
  startsMs: number[];
  errors: string[];
}

export interface HealthProbes {
  readonly modes: readonly ProbeMode[];
  /** A kept-alive agent the caller may use for its own polling. */
  readonly keptAlive: Agent;
  /** Forgets what was measured so far (a warm-up's probes). */
  clear(): void;
  /** Stops probing, waits for the probes in flight, closes the agents. */
  stop(): Promise<void>;
}

export function startHealthProbes(port: number, intervalMs: number): HealthProbes {
  // Idle kept-alive sockets are closed by the client after 4 s, before the server's 5 s
  // keepAliveTimeout can close one just as it is reused (ECONNRESET, a client race, not a failure).
  const keptAlive = new Agent({ keepAlive: true, maxSockets: 256, timeout: 4000 });
  const modes: ProbeMode[] = [
    { name: 'a new connection per probe', agent: new Agent({ keepAlive: false, maxSockets: 256 }) },
    { name: 'kept-alive connections', agent: keptAlive },
  ].map((mode) => ({ ...mode, latenciesMs: [], startsMs: [], errors: [] }));
  let outstanding = 0;
  const timer = setInterval(() => {
    for (const mode of modes) {
      const startedMs = performance.now();
      outstanding++;
      void get(mode.agent, port, '/health').then(() => {
        outstanding--;
        mode.latenciesMs.push(performance.now() - startedMs);
        mode.startsMs.push(startedMs);
      }, (err: Error) => {
        outstanding--;
        mode.errors.push(err.message);
      });
    }
  }, intervalMs);
  return {
    modes,
    keptAlive,
    clear: () => {
      for (const mode of modes) {
        mode.latenciesMs.length = 0;
        mode.startsMs.length = 0;
        mode.errors.length = 0;
      }
    },
    stop: async () => {
      clearInterval(timer);
      while (outstanding > 0) await new Promise((resolve) => setTimeout(resolve, 10));
      for (const mode of modes) mode.agent.destroy();
    },
  };
}
