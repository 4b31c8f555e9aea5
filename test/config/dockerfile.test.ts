/**
 * The container files, checked without a container runtime (no base image can be pulled here):
 * the Dockerfile parsed into its stages and instructions and held to the rules an image linter
 * would apply (hadolint's DL3006/DL3007 pinned tags, DL3020 no ADD of URLs, DL3002 last USER not
 * root, plus the project's own: npm ci, production dependencies only, HEALTHCHECK on the admin
 * /ready, EXPOSE of the config's ports, the dialout group, a data volume), and compose.yaml parsed
 * as YAML and checked for the two-node PostgreSQL cluster it promises: each node's config by
 * SMSGATE_CONFIG, one shared key file, migrate run once before the nodes.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/gateway/config.js';
import { isLoopbackHost } from '../../src/admin/admin-config.js';

const ROOT = join(import.meta.dirname, '..', '..');

interface Instruction { keyword: string; args: string }
interface Stage { from: string; name: string | undefined; instructions: Instruction[] }

/** Instructions with continuation lines joined and comments dropped; `ARG` defaults before the first FROM substituted into FROM. */
function parseDockerfile(text: string): { args: Map<string, string>; stages: Stage[] } {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    logical.push(`${pending}${line}`.trim());
    pending = '';
  }
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const instruction = { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    if (instruction.keyword === 'ARG' && stages.length === 0) {
      const [name = '', value = ''] = instruction.args.split('=');
      args.set(name, value);
    } else if (instruction.keyword === 'FROM') {
      const [image = '', as, name] = instruction.args.split(/\s+/);
      stages.push({ from: image.replace(/\$\{(\w+)\}|\$(\w+)/g, (_m, a: string, b: string) => args.get(a ?? b) ?? ''), name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return { args, stages };
}

const dockerfile = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const runtime = dockerfile.stages.at(-1) as Stage;
const of = (stage: Stage, keyword: string): string[] => stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
const containerConfig = loadConfig(join(ROOT, 'config', 'container.json'), {});

describe('Dockerfile', () => {
  it('is multi-stage: a build stage with npm ci and npm run build, a runtime stage with production dependencies only', () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    const build = dockerfile.stages.find((s) => s.name === 'build') as Stage;
    const buildRuns = of(build, 'RUN').join('\n');
    expect(buildRuns).toMatch(/\bnpm ci\b/);
    expect(buildRuns).toMatch(/\bnpm run build\b/);
    expect(buildRuns).toMatch(/\bnpm prune --omit=dev\b/);
    expect(buildRuns).not.toMatch(/\bnpm install\b/);
    // The runtime takes the built program and the pruned node_modules, never the sources or dist/test.
    const copies = of(runtime, 'COPY');
    expect(copies).toEqual(expect.arrayContaining(['--from=build /src/node_modules ./node_modules', '--from=build /src/dist/src ./dist/src']));
    expect(copies.some((c) => /dist\/(test|bench)|\/src\/src\b/.test(c))).toBe(false);
  });

  it('pins every base image to a full version tag of node 20 on bookworm-slim, never latest', () => {
    for (const stage of dockerfile.stages) {
      expect(stage.from).toMatch(/^node:20\.\d+\.\d+-bookworm-slim$|@sha256:[0-9a-f]{64}$/);
    }
  });

  it('adds nothing from a URL', () => {
    for (const stage of dockerfile.stages) {
      for (const add of of(stage, 'ADD')) expect(add).not.toMatch(/https?:\/\//);
    }
  });

  it('runs as a non-root user in the dialout group, set before the entrypoint', () => {
    const users = of(runtime, 'USER');
    expect(users.length).toBeGreaterThan(0);
    const last = users.at(-1) as string;
    expect(last).not.toMatch(/^(root|0)(:|$)/);
    const keywords = runtime.instructions.map((i) => i.keyword);
    expect(keywords.lastIndexOf('USER')).toBeLessThan(keywords.indexOf('ENTRYPOINT'));
    const useradd = of(runtime, 'RUN').join('\n');
    expect(useradd).toMatch(new RegExp(`useradd [^\\n]*--groups dialout[^\\n]* ${last}\\b`));
  });

  it('keeps state on a volume, where the container config puts the database', () => {
    const volumes = of(runtime, 'VOLUME').join(' ');
    expect(volumes).toContain('/var/lib/smsgate');
    expect(containerConfig.database.path.startsWith('/var/lib/smsgate/')).toBe(true);
    expect(of(runtime, 'COPY').some((c) => c.endsWith('config/container.json /etc/smsgate/smsgate.json'))).toBe(true);
    expect(of(runtime, 'ENV').join(' ')).toContain('SMSGATE_CONFIG=/etc/smsgate/smsgate.json');
  });

  it('checks health on the admin listener /ready of the container config', () => {
    const [healthcheck] = of(runtime, 'HEALTHCHECK');
    expect(healthcheck).toBeDefined();
    expect(containerConfig.admin).toBeDefined();
    expect(healthcheck).toContain(`http://127.0.0.1:${containerConfig.admin?.port}/ready`);
    // Reached from inside the container, so the admin listener may stay on loopback (no token needed).
    expect(isLoopbackHost(containerConfig.admin?.host ?? '')).toBe(true);
  });

  it('exposes exactly the ports the container config listens on outside the container', () => {
    const exposed = of(runtime, 'EXPOSE').flatMap((e) => e.split(/\s+/)).map((p) => Number(p.replace(/\/tcp$/, '')));
    const outside = [containerConfig.api.port, ...(containerConfig.admin !== undefined && !isLoopbackHost(containerConfig.admin.host) ? [containerConfig.admin.port] : [])];
    expect(exposed.sort()).toEqual(outside.sort());
    expect(containerConfig.api.host).toBe('0.0.0.0');
  });

  it('.dockerignore keeps local state and build output out of the context', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', 'data', '*.key', 'secrets']));
  });
});

describe('compose.yaml', () => {
  // js-yaml is in node_modules as a dependency of a dev tool (swagger-parser), not of smsgate itself.
  const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };
  interface Service {
    image?: string; build?: string; command?: string[]; environment?: Record<string, string>; volumes?: string[]; secrets?: string[];
    depends_on?: Record<string, { condition: string }>; restart?: string;
  }
  const compose = yaml.load(readFileSync(join(ROOT, 'compose.yaml'), 'utf8')) as { services: Record<string, Service>; secrets: Record<string, { file: string }> };
  const nodes = ['node-a', 'node-b'];

  it('runs PostgreSQL, migrate once, then two nodes', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['migrate', 'node-a', 'node-b', 'postgres']);
    expect(compose.services['postgres']?.image).toMatch(/^postgres:\d+\.\d+/);
    expect(compose.services['migrate']).toMatchObject({ command: ['migrate'], restart: 'no', depends_on: { postgres: { condition: 'service_healthy' } } });
    for (const name of nodes) {
      expect(compose.services[name]).toMatchObject({ command: ['serve'], depends_on: { migrate: { condition: 'service_completed_successfully' } } });
    }
  });

  it('gives each node its config by SMSGATE_CONFIG and the one shared key file the config names', () => {
    for (const name of nodes) {
      const node = compose.services[name] as Service;
      const configPath = node.environment?.['SMSGATE_CONFIG'] as string;
      const mount = node.volumes?.find((v) => v.split(':')[1] === configPath);
      expect(mount, `${name} mounts ${configPath}`).toBeDefined();
      const hostFile = join(ROOT, (mount as string).split(':')[0] as string);
      const config = loadConfig(hostFile, { SMSGATE_DB_PASSWORD: 'pw' });
      expect(config.database.url).toBe('postgresql://smsgate:pw@postgres:5432/smsgate');
      expect(node.secrets).toEqual(['smsgate_key']);
      expect(config.database.keyFile).toBe('/run/secrets/smsgate_key');
    }
    expect(compose.secrets['smsgate_key']?.file).toBe('./secrets/smsgate.key');
  });
});
