import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, OPTION_TABLE } from '@crawlq/config';
import { FleetStateReader, registerFleetGauges } from '@crawlq/metrics';
import { REDIS_SERVER_SETTINGS } from '@crawlq/redis';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { cliEnv, REPO_ROOT, runCli } from './support/cli.js';

// The deployment files cannot be run here (no container runtime or cluster),
// so they are parsed and checked against the CLI's own option table: a
// renamed flag or variable, a port that moved, a grace period that grew all
// fail here instead of in production.

type Doc = Record<string, unknown>;
const INFRA = join(REPO_ROOT, 'infra');

function parseYaml(path: string): Doc[] {
  const docs = parseAllDocuments(readFileSync(path, 'utf8'));
  return docs.map((doc) => {
    expect(doc.errors, `${path}: ${doc.errors.map(String).join('; ')}`).toEqual([]);
    return doc.toJS({ maxAliasCount: 100 }) as Doc;
  });
}

const k8sFiles = [
  ...readdirSync(join(INFRA, 'k8s')).filter((name) => name.endsWith('.yaml')).map((name) => join(INFRA, 'k8s', name)),
  ...readdirSync(join(INFRA, 'k8s/alternatives')).filter((name) => name.endsWith('.yaml')).map((name) => join(INFRA, 'k8s/alternatives', name)),
];
const k8s = k8sFiles.flatMap((file) => parseYaml(file).map((doc) => ({ file, doc })));
const compose = parseYaml(join(INFRA, 'compose.yaml'))[0] as { services: Record<string, Doc> };

const KNOWN_ENV = new Set<string>(Object.values(OPTION_TABLE).flatMap((entry) => (entry.env === undefined ? [] : [entry.env])));
KNOWN_ENV.add('CRAWLQ_CONFIG');
const CRAWLQ_ENV = /^(CRAWLQ_|REDIS_URL$|SMTP_|ALERT_)/;

function byKind(kind: string, name?: string): Doc {
  const found = k8s.find(({ doc }) => doc.kind === kind && (name === undefined || (doc.metadata as Doc).name === name));
  if (!found) throw new Error(`no ${kind} ${name ?? ''} in infra/k8s`);
  return found.doc;
}

interface Container {
  name: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: { httpGet: { path: string; port: string | number } };
  readinessProbe?: { httpGet: { path: string; port: string | number } };
}

function podSpec(deployment: Doc): { containers: Container[]; terminationGracePeriodSeconds?: number; securityContext?: Doc } {
  return ((deployment.spec as Doc).template as Doc).spec as never;
}

function literalEnv(container: Container): Record<string, string> {
  return Object.fromEntries((container.env ?? []).flatMap((entry) => (entry.value === undefined ? [] : [[entry.name, entry.value]])));
}

/** The flags `crawlq <command> --help` lists. */
async function helpFlags(command: string): Promise<Set<string>> {
  const help = await runCli([command, '--help'], { env: cliEnv(undefined) });
  expect(help.code, `crawlq ${command} --help: ${help.stderr}`).toBe(0);
  return new Set(help.stdout.match(/--[a-z][a-z-]*/g) ?? []);
}

describe('infra/k8s', () => {
  it('parses, and every object has an apiVersion, kind and name', () => {
    expect(k8s.length).toBeGreaterThanOrEqual(7);
    for (const { file, doc } of k8s) {
      expect(doc.apiVersion, file).toEqual(expect.any(String));
      expect(doc.kind, file).toEqual(expect.any(String));
      expect((doc.metadata as Doc | undefined)?.name, file).toEqual(expect.any(String));
    }
  });

  it('uses only environment variables crawlq reads, with values crawlq accepts', () => {
    const secret = byKind('Secret');
    const secretKeys = new Set(Object.keys(secret.stringData as Doc));
    for (const deployment of k8s.filter(({ doc }) => doc.kind === 'Deployment')) {
      for (const container of podSpec(deployment.doc).containers) {
        for (const entry of container.env ?? []) {
          if (CRAWLQ_ENV.test(entry.name)) expect(KNOWN_ENV, `${deployment.file}: ${entry.name}`).toContain(entry.name);
          const ref = entry.valueFrom?.secretKeyRef;
          if (ref) {
            expect(ref.name).toBe((secret.metadata as Doc).name);
            expect(secretKeys, `${deployment.file}: secret key ${ref.key}`).toContain(ref.key);
          }
        }
        // The literal values parse as crawlq would parse them (the config file is checked below).
        const env = literalEnv(container);
        delete env.CRAWLQ_CONFIG;
        expect(() => loadConfig({ env: { ...env, ...secret.stringData as Record<string, string> } }), deployment.file).not.toThrow();
      }
    }
    for (const value of Object.keys(secret.stringData as Doc)) expect(KNOWN_ENV).toContain(value);
  });

  it('runs real commands with real flags', async () => {
    for (const deployment of k8s.filter(({ doc }) => doc.kind === 'Deployment')) {
      for (const container of podSpec(deployment.doc).containers) {
        const [command, ...rest] = container.args ?? [];
        expect(command, deployment.file).toBeDefined();
        const flags = await helpFlags(command ?? '');
        for (const arg of rest.filter((value) => value.startsWith('--'))) expect(flags, `${deployment.file}: ${arg}`).toContain(arg.split('=')[0]);
      }
    }
  });

  it('the crawl definition ConfigMap is a config file crawlq loads', () => {
    const configMap = byKind('ConfigMap', 'crawlq-crawl-definition');
    const file = join(mkdtempSync(join(tmpdir(), 'crawlq-k8s-')), 'crawl.json');
    writeFileSync(file, String((configMap.data as Doc)['crawl.json']));
    const config = loadConfig({ configFile: file });
    expect(config.explicit.length).toBeGreaterThan(3);
    // The worker reads it where the volume puts it.
    const worker = podSpec(byKind('Deployment', 'crawlq-worker'));
    const container = worker.containers[0] as Container & { volumeMounts: { name: string; mountPath: string }[] };
    const mount = container.volumeMounts.find((entry) => entry.name === 'crawl-definition');
    expect(literalEnv(container).CRAWLQ_CONFIG).toBe(`${mount?.mountPath}/crawl.json`);
  });

  it('worker: graceful stop outlasts --grace-period; probes and the scrape port are the metrics port', () => {
    const worker = podSpec(byKind('Deployment', 'crawlq-worker'));
    const container = worker.containers[0] as Container;
    const config = loadConfig({ env: { ...literalEnv(container), CRAWLQ_CONFIG: '' } });
    expect((worker.terminationGracePeriodSeconds ?? 30) * 1000).toBeGreaterThan(config.gracePeriod + 5_000);
    expect(config.metricsHost).toBe('0.0.0.0');
    const port = container.ports?.find((entry) => entry.containerPort === config.metricsPort);
    expect(port?.name).toBeDefined();
    expect(container.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: port?.name });
    expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: port?.name });
    const annotations = ((byKind('Deployment', 'crawlq-worker').spec as Doc).template as { metadata: { annotations: Record<string, string> } }).metadata.annotations;
    expect(Number(annotations['prometheus.io/port'])).toBe(config.metricsPort);
    expect(worker.securityContext?.runAsNonRoot).toBe(true);
  });

  it('dashboard: the Service reaches the port the dashboard listens on, probes use its health endpoints', () => {
    const dashboard = podSpec(byKind('Deployment', 'crawlq-dashboard'));
    const container = dashboard.containers[0] as Container;
    const config = loadConfig({ env: literalEnv(container) });
    const port = container.ports?.find((entry) => entry.containerPort === config.dashboardPort);
    const service = byKind('Service', 'crawlq-dashboard');
    const targetPort = ((service.spec as Doc).ports as { targetPort: string | number }[])[0]?.targetPort;
    expect([port?.name, port?.containerPort]).toContain(targetPort);
    expect(container.livenessProbe?.httpGet.path).toBe('/healthz');
    expect(container.readinessProbe?.httpGet.path).toBe('/readyz');
  });

  it('autoscales the worker Deployment on the due gauge crawlq serves (KEDA, and the HPA alternative)', () => {
    const registry = new Registry();
    const redis = new Redis({ lazyConnect: true });
    registerFleetGauges(registry, new FleetStateReader({ redis, namespace: 'x' }));
    expect(registry.getSingleMetric('crawlq_queue_jobs')).toBeDefined();
    redis.disconnect();

    const scaled = byKind('ScaledObject');
    const spec = scaled.spec as { scaleTargetRef: { name: string }; triggers: { type: string; metadata: { query: string } }[] };
    expect(spec.scaleTargetRef.name).toBe('crawlq-worker');
    expect(spec.triggers[0]?.metadata.query).toContain('crawlq_queue_jobs{state="due"}');
    const hpa = byKind('HorizontalPodAutoscaler').spec as { scaleTargetRef: { name: string }; metrics: { external: { metric: { name: string; selector: { matchLabels: Record<string, string> } } } }[] };
    expect(hpa.scaleTargetRef.name).toBe('crawlq-worker');
    expect(hpa.metrics[0]?.external.metric).toEqual({ name: 'crawlq_queue_jobs', selector: { matchLabels: { state: 'due' } } });
  });
});

describe('infra/redis.conf', () => {
  it('sets every server setting the embedded Redis gets', () => {
    const lines = readFileSync(join(INFRA, 'redis.conf'), 'utf8').split('\n');
    for (const [name, value] of Object.entries(REDIS_SERVER_SETTINGS)) expect(lines).toContain(`${name} ${value}`);
  });
});

describe('infra/compose.yaml', () => {
  it('runs Redis with AOF everysec and noeviction', () => {
    const command = compose.services.redis?.command as string[];
    expect(command.join(' ')).toContain('--appendonly yes');
    expect(command.join(' ')).toContain('--appendfsync everysec');
    expect(command.join(' ')).toContain('--maxmemory-policy noeviction');
    for (const [name, value] of Object.entries(REDIS_SERVER_SETTINGS)) expect(command.join(' ')).toContain(`--${name} ${value}`);
  });

  it('has workers, the dashboard, an SMTP catcher and a one-shot enqueue, with variables and values crawlq accepts', async () => {
    expect(Object.keys(compose.services).sort()).toEqual(['dashboard', 'enqueue', 'mail', 'redis', 'worker']);
    for (const name of ['worker', 'dashboard', 'enqueue']) {
      const service = compose.services[name] as { environment: Record<string, string>; command?: string[]; entrypoint?: string[] };
      const env = Object.fromEntries(Object.entries(service.environment).filter(([key]) => CRAWLQ_ENV.test(key)));
      for (const key of Object.keys(env)) expect(KNOWN_ENV, `${name}: ${key}`).toContain(key);
      expect(() => loadConfig({ env }), name).not.toThrow();
      const command = service.command?.[0] ?? /main\.js (\w+)/.exec(service.entrypoint?.join(' ') ?? '')?.[1];
      expect(command, name).toBeDefined();
      await helpFlags(command ?? '');
    }
    const worker = compose.services.worker as { environment: Record<string, string>; stop_grace_period: string };
    expect(Number.parseInt(worker.stop_grace_period, 10) * 1000).toBeGreaterThan(loadConfig({ env: worker.environment }).gracePeriod);
    expect((compose.services.enqueue as { restart: string }).restart).toBe('no');
    expect(String((compose.services.worker as { environment: Record<string, string> }).environment.SMTP_URL)).toContain('mail:');
  });
});

describe('infra/docker/Dockerfile', () => {
  const dockerfile = readFileSync(join(INFRA, 'docker/Dockerfile'), 'utf8');
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

  it('is multi-stage and runs built JavaScript as a non-root user under an init process', () => {
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/pnpm build/);
    expect(runtime).toMatch(/^USER (?!root)\w+/m);
    expect(runtime).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--", "node", "\/app\/apps\/cli\/dist\/main\.js"\]/m);
    expect(runtime).not.toMatch(/tsx|--conditions=@crawlq\/source/);
  });

  it('checks health on /healthz at the metrics port the image configures', () => {
    const env: Record<string, string> = Object.fromEntries([...runtime.matchAll(/(CRAWLQ_[A-Z_]+)=(\S+)/g)].map((match) => [String(match[1]), String(match[2])]));
    for (const key of Object.keys(env)) expect(KNOWN_ENV).toContain(String(key));
    const config = loadConfig({ env });
    expect(runtime).toMatch(/^HEALTHCHECK .*\n?.*\/healthz/m);
    expect(runtime).toContain(`EXPOSE ${config.metricsPort}`);
    expect(runtime).toContain(`process.env.CRAWLQ_METRICS_PORT || ${config.metricsPort}`);
  });
});
