import type { Command } from 'commander';
import { lineLogger } from '@crawlq/logging';
import { addConfigOptions, ADMIN_OPTIONS, configFrom, LOG_OPTIONS } from '../config-options.js';
import { processLogger } from '../process-logging.js';

export function registerDashboard(program: Command): void {
  const command = program.command('dashboard').description('Web dashboard: crawl overview with group pause/resume, queues (Bull Board) and dead-letter review; loopback only unless credentials are set');
  addConfigOptions(command, [...ADMIN_OPTIONS, 'dashboardHost', 'dashboardPort', 'attempts', 'backoff', ...LOG_OPTIONS]).action(async (flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    const logger = processLogger(config, 'dashboard');
    const log = lineLogger(logger);
    // Loaded on demand: express and Bull Board are heavy, and no other command needs them.
    const [{ startDashboard, DashboardConfigError }, { retryJobPolicyFor }, { startObservability }, { withRedis }] = await Promise.all([
      import('@crawlq/dashboard'),
      import('@crawlq/crawl-control'),
      import('@crawlq/metrics'),
      import('../redis-session.js'),
    ]);
    await withRedis(config, async (redisUrl) => {
      // The fleet's gauges and health on the dashboard's own port.
      const observability = await startObservability({ redisUrl, namespace: config.namespace, logger, role: 'dashboard' });
      observability.setReady(true);
      let dashboard;
      try {
        dashboard = await startDashboard({
          redisUrl,
          namespace: config.namespace,
          host: config.dashboardHost,
          port: config.dashboardPort,
          ...(config.dashboardUser && config.dashboardPassword ? { auth: { user: config.dashboardUser, password: config.dashboardPassword } } : {}),
          // Retries from the dashboard get the fleet's attempts and backoff, unless the command was given its own.
          jobPolicy: await retryJobPolicyFor(config, redisUrl),
          log,
          opsEndpoints: observability.handle,
        });
      } catch (error) {
        if (error instanceof DashboardConfigError) {
          process.stderr.write(`crawlq: ${error.message}\n`);
          process.exitCode = 2;
          await observability.close();
          return;
        }
        await observability.close();
        throw error;
      }
      process.stdout.write(`dashboard: ${dashboard.url}  (Ctrl-C to stop)\n`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve()).once('SIGTERM', () => resolve());
      });
      await dashboard.close();
      await observability.close();
    });
  });
}
