// oidc-provider (a certified OpenID Connect provider) as the authorization server of `dagtools mcp`, on
// 127.0.0.1:PORT: dynamic client registration, PKCE, resource indicators (RFC 8707) minting access tokens for the
// resource asked for, as JWTs (RFC 9068) or with --opaque as opaque tokens to introspect (RFC 7662). Logins and
// consent go through its development interactions (any login name is an account of that name).
//
// Static clients: `machine` (client credentials, 10-minute tokens), `brief` (client credentials, 1-second tokens)
// and `dagtools-rs` (the resource server's own credentials, for introspection).
// Test-only routes beside the provider's: POST /-/rotate signs with a new key from then on (the old one stays
// published), GET /-/stats counts the fetches of the metadata and the key set, and the introspections, and
// POST /-/down?seconds=N stops listening for N seconds (connections are refused), then listens again as it was.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import http from 'node:http';

import Provider from 'oidc-provider';

const port = Number(process.argv[2]);
if (!port) {
  console.error('usage: node oidc.mjs PORT [--opaque]');
  process.exit(2);
}
const opaque = process.argv.includes('--opaque');
const issuer = `http://127.0.0.1:${port}`;
const SCOPES = ['dagtools:read', 'dagtools:write'];

function signingKey() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), use: 'sig', alg: 'RS256' };
}

let keys = [signingKey()];
const stats = { metadata: 0, jwks: 0, introspections: 0 };

function configuration() {
  return {
    clients: [
      {
        client_id: 'machine',
        client_secret: 'machine-secret-0123456789abcdef',
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        scope: SCOPES.join(' '),
      },
      {
        client_id: 'brief',
        client_secret: 'brief-secret-0123456789abcdef',
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        scope: SCOPES.join(' '),
      },
      {
        client_id: 'dagtools-rs',
        client_secret: 'rs-secret-0123456789abcdef',
        grant_types: [],
        redirect_uris: [],
        response_types: [],
      },
    ],
    jwks: { keys },
    scopes: ['openid', 'offline_access', ...SCOPES],
    findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    clientBasedCORS: () => true,
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (ctx, client, oneOf) => oneOf ?? undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource, client) => ({
          scope: SCOPES.join(' '),
          audience: resource,
          accessTokenTTL: client.clientId === 'brief' ? 1 : 600,
          accessTokenFormat: opaque ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  };
}

let provider = new Provider(issuer, configuration());

const server = http.createServer((req, res) => {
  if (req.url === '/-/rotate' && req.method === 'POST') {
    keys = [signingKey(), ...keys];
    provider = new Provider(issuer, configuration()); // the memory adapter (clients, grants) is shared
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kid: keys[0].kid }));
    return;
  }
  if (req.url.startsWith('/-/down?seconds=') && req.method === 'POST') {
    const seconds = Number(req.url.split('=')[1]);
    res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
    res.end(JSON.stringify({ down: seconds }));
    server.close();
    server.closeIdleConnections();
    setTimeout(() => server.listen(port, '127.0.0.1'), seconds * 1000);
    return;
  }
  if (req.url === '/-/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(stats));
    return;
  }
  if (req.url.startsWith('/.well-known/')) stats.metadata += 1;
  if (req.url === '/jwks') stats.jwks += 1;
  if (req.url === '/token/introspection') stats.introspections += 1;
  provider.callback()(req, res);
});
server.listen(port, '127.0.0.1', () => console.log(`oidc-provider listening on ${issuer}`));
