/**
 * The policy: read as JSON or as the stored HuJSON text (comments kept), replace it with
 * optimistic concurrency (`If-Match`), and validate a draft without changing anything.
 */
import type { ValidationResultBody } from '@warren/contract';
import type { RawResponse, RequestOptions, Transport } from './http.js';
import { toError } from './http.js';
import type { CallOptions, Policy, PolicyDocument, PolicyText, PolicyVersion } from './types.js';

export const HUJSON = 'application/hujson';

/** A draft as the request body: text is sent verbatim as HuJSON, an object as JSON. */
function policyBody(policy: string | PolicyDocument): Pick<RequestOptions, 'text' | 'body'> {
  return typeof policy === 'string' ? { text: { body: policy, contentType: HUJSON } } : { body: policy };
}

function etagOf(response: RawResponse): string {
  return response.headers.get('etag') ?? '';
}

function ok(response: RawResponse): RawResponse {
  if (response.status >= 400) throw toError(response);
  return response;
}

export class Acl {
  constructor(private readonly http: Transport) {}

  /** `GET /v1/acl` as JSON, with its ETag. */
  async get(options: CallOptions = {}): Promise<Policy> {
    const response = ok(await this.http.raw('GET', '/v1/acl', options));
    return { policy: JSON.parse(response.text) as PolicyDocument, etag: etagOf(response) };
  }

  /** `GET /v1/acl` with `Accept: application/hujson`: the stored text, comments and all, with its ETag. */
  async getText(options: CallOptions = {}): Promise<PolicyText> {
    const response = ok(await this.http.raw('GET', '/v1/acl', { ...options, headers: { accept: HUJSON } }));
    return { text: response.text, etag: etagOf(response) };
  }

  /**
   * `PUT /v1/acl`: replaces the policy. With `ifMatch` the server refuses (412
   * `precondition_failed`) when the policy changed since that ETag was read. An invalid
   * policy is a WarrenError `policy_invalid` whose `errors` hold each problem's line and column.
   */
  async set(policy: string | PolicyDocument, options: CallOptions & { ifMatch?: string } = {}): Promise<Policy> {
    const { ifMatch, ...call } = options;
    const response = ok(
      await this.http.raw('PUT', '/v1/acl', {
        ...call,
        ...policyBody(policy),
        headers: ifMatch ? { 'if-match': ifMatch } : undefined,
      }),
    );
    return { policy: JSON.parse(response.text) as PolicyDocument, etag: etagOf(response) };
  }

  /** `GET /v1/acl/history`: every stored version of the policy, newest first. */
  async history(options: CallOptions = {}): Promise<PolicyVersion[]> {
    const body = await this.http.json<{ versions: PolicyVersion[] }>('GET', '/v1/acl/history', options);
    return body.versions;
  }

  /** `GET /v1/acl/history/{version}`: the text of one stored version, as it was sent. */
  async version(version: number, options: CallOptions = {}): Promise<PolicyText> {
    const response = ok(
      await this.http.raw('GET', `/v1/acl/history/${version}`, { ...options, headers: { accept: HUJSON } }),
    );
    return { text: response.text, etag: etagOf(response) };
  }

  /** `POST /v1/acl/validate`: `{ valid, errors }`; never changes anything. */
  validate(policy: string | PolicyDocument, options: CallOptions = {}): Promise<ValidationResultBody> {
    return this.http.json('POST', '/v1/acl/validate', { ...options, ...policyBody(policy) });
  }
}
