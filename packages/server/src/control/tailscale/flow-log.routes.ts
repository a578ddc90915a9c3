/**
 * The upload endpoint of Tailscale's network flow logs: `POST /c/tailtraffic.log.tailscale.io/
 * {private log id}[?copyId=…]`, the path a client's logtail posts to (docs/TAILSCALE.md says
 * how its uploads reach Warren). The private id in the path is the credential: Warren finds
 * the device by its public id (flow-log-ids.ts), so a device can only ever upload its own
 * flows. The body is a JSON array, zstd-compressed when logtail found that worth it
 * (`Content-Encoding: zstd`); it comes without a Content-Type.
 *
 * An accepted upload answers 200 even when some entries were rejected (the client would retry
 * any other answer with the same body, forever): the counts say what was kept. Uploads to other
 * collections (the client's own logs) answer 200 and are dropped, for the same reason.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, invalidRequest, invalidState, unauthenticated } from '../../core/errors.js';
import { clientAddress } from '../../edge/client-address.js';
import { rateLimited, setRateLimitHeaders } from '../../edge/rate-limit-reply.js';
import { ingestFlowLog } from '../../modules/logs/flow-logs.service.js';
import { publicLogId } from './flow-log-ids.js';
import { deviceByFlowLogId } from './tailscale.repository.js';
import { inflateZstd } from './zstd-inflate.js';

export const FLOW_LOG_COLLECTION = 'tailtraffic.log.tailscale.io';
/** Logtail sends at most 256 KiB of entries plus one entry of up to 256 KiB; twice that is ample. */
export const MAX_FLOW_LOG_BYTES = 1024 * 1024;

function bodyOf(request: FastifyRequest): unknown {
  let raw = request.body as Buffer | undefined;
  if (!raw || raw.length === 0) return [];
  const encoding = String(request.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding === 'zstd') {
    const inflated = inflateZstd(raw, MAX_FLOW_LOG_BYTES);
    if (!inflated.ok) {
      if (inflated.reason.endsWith('too large')) {
        throw new ApiError('payload_too_large', `${inflated.reason}: at most ${MAX_FLOW_LOG_BYTES} bytes decoded`);
      }
      throw invalidRequest(inflated.reason);
    }
    raw = inflated.body;
  } else if (encoding !== 'identity') {
    throw new ApiError('unsupported_media_type', `Content-Encoding "${encoding}" is not zstd`);
  }
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw invalidRequest('the flow log is not JSON (logtail sends a JSON array of log entries)');
  }
}

export async function flowLogRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  // Whatever the type (logtail sends none), the body is read as bytes and judged below.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_FLOW_LOG_BYTES }, (_request, body, done) =>
    done(null, body),
  );

  app.post<{ Params: { collection: string; id: string } }>(
    '/c/:collection/:id',
    { config: { auth: 'none', audit: false, contentCodings: ['zstd'] }, schema: { hide: true } },
    async (request, reply) => {
      const { collection, id } = request.params;
      const publicId = publicLogId(id);
      if (collection !== FLOW_LOG_COLLECTION) {
        if (publicId === undefined) throw invalidRequest('a logtail upload names a private log id: 64 hex digits');
        // The client's own logs (tailnode.log.tailscale.io), which reach Warren wherever
        // log.tailscale.com is pointed at it. They are not Warren's to keep; refusing them would
        // make logtail resend the same body every 30-60 s forever, so they are dropped undecoded.
        return reply.code(200).send({ stored: false });
      }
      const device = publicId === undefined ? undefined : await deviceByFlowLogId(ctx.db, publicId);
      if (!device || device.flow_log_id === null || publicId === undefined) {
        const decision = await ctx.limiter.hit(`addr:${clientAddress(request)}`, ctx.settings.anonymousRateLimit);
        setRateLimitHeaders(reply, decision);
        if (!decision.allowed) throw rateLimited(decision, `client ${clientAddress(request)}`);
        throw unauthenticated('this log id belongs to no device: a device uploads with the id its map gives it');
      }
      if (device.user_status === 'suspended') throw unauthenticated(`the user of device ${device.id} is suspended`);
      if (device.flow_logs === 0)
        throw invalidState('network flow logs are off (PATCH /v1/network {"flowLogs": true})');
      const decision = await ctx.limiter.hit(`dev:${device.id}`, ctx.settings.deviceRateLimit);
      setRateLimitHeaders(reply, decision);
      if (!decision.allowed) throw rateLimited(decision, `device ${device.id}`);
      const result = await ingestFlowLog(ctx, { networkId: device.network_id, deviceId: device.id }, bodyOf(request));
      return reply.code(200).send(result);
    },
  );
}
