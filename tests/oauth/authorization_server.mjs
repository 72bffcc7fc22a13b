// The OAuth authorization server of the end-to-end tests: panva's oidc-provider, configured only.
//
// Run with the pinned Node: `node authorization_server.mjs` with OIDC_PROVIDER (the package's
// entry file), ACCESS_TOKEN_TTL (seconds) and PROTECTED_PREFIX (the resource indicators it issues
// tokens for) in the environment. It listens on 127.0.0.1 at a port of the kernel's choosing and
// prints one JSON line on stdout: {"issuer": "http://127.0.0.1:<port>"}.
//
// What it offers: dynamic client registration (RFC 7591), the authorization code grant with PKCE
// (required for every client), resource indicators (RFC 8707) with JWT access tokens whose
// audience is the resource, refresh tokens for clients registered with the refresh_token grant,
// client credentials, and its development login and consent pages (any login and password).
import http from 'node:http';

const { default: Provider, errors } = await import(process.env.OIDC_PROVIDER);
const ttl = Number(process.env.ACCESS_TOKEN_TTL || 3600);
const prefix = process.env.PROTECTED_PREFIX || 'http://127.0.0.1:';
const SCOPE = 'mcp:tools';

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (ctx, resourceIndicator) => {
        if (!resourceIndicator.startsWith(prefix)) throw new errors.InvalidTarget();
        return {
          scope: SCOPE,
          audience: resourceIndicator,
          accessTokenTTL: ttl,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  scopes: ['openid', 'offline_access', SCOPE],
  clientDefaults: {
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  pkce: { required: () => true },
  cookies: { keys: ['plainmcp-tests-cookie-key-0123456789'] },
  ttl: { RefreshToken: 86400, Grant: 86400, Session: 86400, Interaction: 600 },
});
provider.on('grant.success', (ctx) => console.error(`grant.success ${ctx.oidc.params.grant_type}`));
provider.on('grant.error', (ctx, error) => console.error(`grant.error ${error.message}`));

server.on('request', provider.callback());
console.log(JSON.stringify({ issuer }));
