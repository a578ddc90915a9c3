/**
 * buildApp: the one place where plugins and modules are wired. Tests call it on a fresh
 * database and drive it over real HTTP; main.ts calls it to serve. The web console is part of
 * the app (every way of starting it serves the same pages); `console: false` leaves it out.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import { type EmbeddedRelayOptions, startEmbeddedRelay } from './control/derp/embedded-relay.js';
import { connectionReportRoutes } from './control/native/connections.routes.js';
import { nodeRoutes } from './control/native/node.routes.js';
import { flowLogRoutes } from './control/tailscale/flow-log.routes.js';
import { tailscaleRoutes, ts2021Upgrade } from './control/tailscale/ts2021.js';
import { routeUpgrades, type UpgradeHandler } from './control/upgrades.js';
import { type AppContext, DEFAULT_SETTINGS, type RateLimiter, type Settings } from './core/context.js';
import type { Worker } from './core/worker.js';
import { recordClientAddresses } from './edge/client-address.js';
import { MemoryRateLimiter, PostgresRateLimiter } from './edge/rate-limiter.js';
import { limitByAddress } from './http/address-limit.js';
import { AuditLog } from './http/audit.js';
import { registerBodyParsing } from './http/bodies.js';
import { clientErrorHandler } from './http/client-error.js';
import { routeUnknownExpectations } from './http/codings.js';
import { type ConsoleOptions, registerConsole } from './http/console.js';
import { registerErrorHandling } from './http/error-handler.js';
import { frameworkErrorHandler, MAX_PARAM_LENGTH } from './http/framework-errors.js';
import { healthRoutes } from './http/health.js';
import { registerOpenApi } from './http/openapi.js';
import { registerPipeline } from './http/pipeline.js';
import { requestIdFrom } from './http/request-id.js';
import { registerRequestLog } from './http/request-log.js';
import { registerRouteTable } from './http/route-table.js';
import { aclRoutes } from './http/routes/acl.routes.js';
import { auditLogRoutes } from './http/routes/audit-log.routes.js';
import { connectionLogRoutes } from './http/routes/connections.routes.js';
import { devicesRoutes } from './http/routes/devices.routes.js';
import { eventsRoutes } from './http/routes/events.routes.js';
import { keysRoutes } from './http/routes/keys.routes.js';
import { machineLoginRoutes } from './http/routes/machine-login.routes.js';
import { meRoutes } from './http/routes/me.routes.js';
import { networkRoutes } from './http/routes/network.routes.js';
import { routesRoutes } from './http/routes/routes.routes.js';
import { scimRoutes } from './http/routes/scim.routes.js';
import { sessionRoutes } from './http/routes/session.routes.js';
import { sshCheckRoutes } from './http/routes/ssh-check.routes.js';
import { ssoRoutes } from './http/routes/sso.routes.js';
import { ssoLoginRoutes } from './http/routes/sso-login.routes.js';
import { usersRoutes } from './http/routes/users.routes.js';
import { webhooksRoutes } from './http/routes/webhooks.routes.js';
import { lazySerializers } from './http/serializers.js';
import { TAILSCALE_API_PREFIX } from './http/tailscale-api/errors.js';
import { tailscaleApi } from './http/tailscale-api/index.js';
import { type HttpTimeouts, timeoutOptions } from './http/timeouts.js';
import { registerValidation } from './http/validation.js';
import { LogIds } from './lib/log-ids.js';
import { type Clock, systemClock } from './lib/time.js';
import { compileLoadedPoliciesWith } from './modules/acl/policy-cache.js';
import { DEFAULT_POLICY_BUDGET_MS, PolicyPool } from './modules/acl/policy-pool.js';
import { startEphemeralSweeper } from './modules/devices/ephemeral-sweeper.js';
import { startEventWork } from './modules/events/events.worker.js';
import { startConnectionRetention } from './modules/logs/connections.retention.js';
import { startWebhookDispatcher } from './modules/webhooks/dispatcher.js';
import type { Storage } from './storage/database.js';
import { VERSION } from './version.js';

export interface AppOptions {
  storage: Storage;
  clock?: Clock;
  settings?: Partial<Settings>;
  logger?: FastifyServerOptions['logger'];
  /** The web console at `/` (default: packages/console/dist); `false` serves the API alone. */
  console?: ConsoleOptions | false;
  /** The embedded DERP relay and its STUN responder (`warren serve --derp`); off by default. */
  relay?: EmbeddedRelayOptions | false;
  /** Limits on receiving a request (http/timeouts.ts); tests shorten them. */
  timeouts?: Partial<HttpTimeouts>;
}

export const BODY_LIMIT = 1024 * 1024;

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { storage } = options;
  const clock = options.clock ?? systemClock;
  const limiter: RateLimiter =
    storage.dialect === 'postgres' ? new PostgresRateLimiter(storage.db, clock) : new MemoryRateLimiter(clock);
  const audit = new AuditLog(storage.db);
  const logIds = await LogIds.load(storage.db);
  const settings = { ...DEFAULT_SETTINGS, ...options.settings };
  const policies = new PolicyPool({ budgetMs: settings.policyTimeBudgetMs ?? DEFAULT_POLICY_BUDGET_MS });
  const ctx: AppContext = {
    db: storage.db,
    dialect: storage.dialect,
    changes: storage.changes,
    clock,
    audit,
    limiter,
    logIds,
    settings,
    policies,
  };

  const limits = timeoutOptions(options.timeouts);
  const app: FastifyInstance = Fastify({
    logger: options.logger ?? false,
    // One line per request, written when it is answered (http/request-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    genReqId: requestIdFrom,
    requestIdHeader: false,
    // Refusals made below the pipeline are problems too: the router's (bad encoding, a
    // parameter too long), Node's parser's (headers too large, an unknown method), and the
    // pipeline answers 503 itself while the server closes.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler: clientErrorHandler(ctx, (): FastifyInstance => app),
    return503OnClosing: false,
    ...limits,
    // Host is judged in the pipeline (http/host-header.ts), which answers with a problem.
    http: { ...limits.http, requireHostHeader: false },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers() } },
  });
  recordClientAddresses(app.server);
  audit.onError = (error) => app.log.error({ err: error }, 'audit log write failed');
  app.decorate('ctx', ctx);
  const stopCompilingLoaded = compileLoadedPoliciesWith(policies);
  app.addHook('onClose', async () => {
    await audit.close();
    limiter.close();
    stopCompilingLoaded();
    await policies.close();
  });

  registerBodyParsing(app);
  routeUnknownExpectations(app);
  registerRouteTable(app);
  registerErrorHandling(app);
  registerValidation(app);
  registerPipeline(app);
  registerRequestLog(app);
  await registerOpenApi(app, VERSION);

  await app.register(healthRoutes);
  await app.register(ssoLoginRoutes);
  await app.register(sessionRoutes);
  await app.register(machineLoginRoutes);
  await app.register(sshCheckRoutes);
  await app.register(scimRoutes, { prefix: '/scim/v2' });
  // Tailscale's control protocol (GET /key, POST /ts2021): its clients use Warren as their login server.
  await app.register(tailscaleRoutes);
  // Network flow logs that Tailscale clients upload (POST /c/tailtraffic.log.tailscale.io/{id}).
  await app.register(flowLogRoutes);
  await app.register(
    async (v1) => {
      // Public, but a /v1 call like any other: limited per client address, with its headers.
      v1.get(
        '/openapi.json',
        { config: { auth: 'none' }, schema: { hide: true }, preHandler: limitByAddress },
        async () => app.swagger(),
      );
      await v1.register(networkRoutes);
      await v1.register(ssoRoutes);
      await v1.register(meRoutes);
      await v1.register(usersRoutes);
      await v1.register(keysRoutes);
      await v1.register(auditLogRoutes);
      await v1.register(eventsRoutes);
      await v1.register(webhooksRoutes);
      await v1.register(aclRoutes);
      await v1.register(devicesRoutes);
      await v1.register(routesRoutes);
      await v1.register(nodeRoutes);
      await v1.register(connectionLogRoutes);
      await v1.register(connectionReportRoutes);
    },
    { prefix: '/v1' },
  );
  const upgrades = new Map<string, UpgradeHandler>();
  const relay = options.relay ? await startEmbeddedRelay(app, options.relay) : null;
  if (relay) upgrades.set('/derp', relay.upgrade);
  app.decorate('embeddedRelay', relay);
  upgrades.set('/ts2021', ts2021Upgrade(app));
  routeUpgrades(app.server, upgrades, (request, response) => app.routing(request, response));
  await app.register(tailscaleApi, { prefix: TAILSCALE_API_PREFIX });
  if (options.console !== false) registerConsole(app, options.console);
  // Background work of this process, stopped (in this order) when the app closes.
  const workers: Worker[] = [
    startEphemeralSweeper(ctx, app.log),
    startConnectionRetention(ctx, app.log),
    startEventWork(ctx, app.log),
    startWebhookDispatcher(ctx, app.log, app.server),
  ];
  for (const worker of workers) app.addHook('onClose', () => worker.stop());
  return app;
}
