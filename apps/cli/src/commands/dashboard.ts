import type { CrawlqConfig } from '@crawlq/config';
import { readFleetConfig } from '@crawlq/crawler';
import type { Command } from 'commander';
import { addConfigOptions, ADMIN_OPTIONS, configFrom } from '../config-options.js';
import { withRedis } from '../redis-session.js';

export function registerDashboard(program: Command): void {
  const command = program.command('dashboard').description('Web dashboard: queues (Bull Board) and dead-letter review; loopback only unless credentials are set');
  addConfigOptions(command, [...ADMIN_OPTIONS, 'dashboardHost', 'dashboardPort', 'attempts', 'backoff']).action(async (flags: Record<string, unknown>) => {
    const config = configFrom(flags);
    const log = (line: string) => process.stderr.write(`[dashboard] ${line}\n`);
    // Loaded on demand: express and Bull Board are heavy, and no other command needs them.
    const { startDashboard, DashboardConfigError } = await import('@crawlq/dashboard');
    await withRedis(config, async (redisUrl) => {
      let dashboard;
      try {
        dashboard = await startDashboard({
          redisUrl,
          namespace: config.namespace,
          host: config.dashboardHost,
          port: config.dashboardPort,
          ...(config.dashboardUser && config.dashboardPassword ? { auth: { user: config.dashboardUser, password: config.dashboardPassword } } : {}),
          jobPolicy: await jobPolicyFor(config, redisUrl),
          log,
        });
      } catch (error) {
        if (error instanceof DashboardConfigError) {
          process.stderr.write(`crawlq: ${error.message}\n`);
          process.exitCode = 2;
          return;
        }
        throw error;
      }
      process.stdout.write(`dashboard: ${dashboard.url}  (Ctrl-C to stop)\n`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve()).once('SIGTERM', () => resolve());
      });
      await dashboard.close();
    });
  });
}

/** Retries from the dashboard get the fleet's attempts and backoff, unless the command was given its own. */
async function jobPolicyFor(config: CrawlqConfig, redisUrl: string): Promise<{ attempts: number; backoffMs: number }> {
  const fleet = (await readFleetConfig(config, redisUrl)).config;
  return {
    attempts: config.explicit.includes('attempts') ? config.attempts : fleet.attempts,
    backoffMs: config.explicit.includes('backoff') ? config.backoff : fleet.backoff,
  };
}
