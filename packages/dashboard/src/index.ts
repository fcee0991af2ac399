export {
  startDashboard,
  DEFAULT_DASHBOARD_HOST,
  DEFAULT_DASHBOARD_PORT,
  type Dashboard,
  type DashboardOptions,
} from './start-dashboard.js';
export type { DashboardAuth } from './basic-auth.js';
export { DashboardConfigError, DashboardStartError } from './errors.js';
export { isLoopbackHost } from './loopback.js';
export { BULL_BOARD_PATH } from './bull-board.js';
