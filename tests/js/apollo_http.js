// Apollo Server's own HTTP integration API on node:http, with POST /reset beside it: the orders and
// warehouse apps listen through it on 127.0.0.1:PORT, GraphQL at any path.
'use strict';

const http = require('http');
const { HeaderMap } = require('@apollo/server');

// Listen on 127.0.0.1:port with `server` (started), calling `reset()` on POST /reset.
function listen(server, port, reset) {
  http.createServer((req, res) => serve(server, reset, req, res).catch((error) => {
    res.statusCode = 500;
    res.end(String(error));
  })).listen(port, '127.0.0.1');
}

async function serve(server, reset, req, res) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  if (req.method === 'POST' && req.url === '/reset') {
    reset();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"reset": true}');
    return;
  }
  const headers = new HeaderMap();
  for (const [name, value] of Object.entries(req.headers)) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  const text = Buffer.concat(chunks).toString('utf8');
  const httpGraphQLRequest = {
    method: req.method.toUpperCase(),
    headers,
    search: new URL(req.url, 'http://127.0.0.1').search,
    body: text ? JSON.parse(text) : undefined,
  };
  const result = await server.executeHTTPGraphQLRequest({ httpGraphQLRequest, context: async () => ({}) });
  for (const [name, value] of result.headers) res.setHeader(name, value);
  res.statusCode = result.status || 200;
  if (result.body.kind === 'complete') {
    res.end(result.body.string);
    return;
  }
  for await (const chunk of result.body.asyncIterator) res.write(chunk);
  res.end();
}

module.exports = { listen };
