// A GraphQL gateway over a REST service, as GraphQL Mesh builds one, served on 127.0.0.1:PORT/graphql.
//
//   node gateway.js PORT
//
// The REST service (node:http, on a second loopback port in this process) rents bikes: stations, the
// bikes docked at each, and rides. Its OpenAPI document is turned into a GraphQL schema by
// @omnigraph/openapi (GraphQL Mesh's OpenAPI handler) and served by GraphQL Yoga. What a gateway like
// this gives a client, and dagtools must cope with:
// - objects whose identity is an `id` looked up under another name (`getRide(rideId:)`,
//   `getStation(stationId:)`), and bikes with an `id` and no lookup at all, reached only through a
//   station's list;
// - lists that change under mutation: `listRides` is newest first (a ride started goes to the top),
//   a bike that starts a ride leaves its station's `bikes`, one whose ride ends docks at the end of
//   another station's;
// - `Station.bikes` and `Bike.rides` as OpenAPI links: each costs one more upstream request per object;
// - upstream errors as Mesh reports them: "Upstream HTTP Error: 400" with the REST service's own
//   words in `extensions` (`limit` out of range answers 400 `{"message": "limit must be between 1
//   and 50."}`; an unknown ride 404 with a `code` and a `field`).
// GET /upstream on the gateway's port answers how many requests the REST service has served; POST
// /reset puts the data back as it started.
'use strict';

const http = require('http');

const port = Number(process.argv[2]);
if (!port) {
  console.error('usage: node gateway.js PORT');
  process.exit(2);
}

// -- the REST service ---------------------------------------------------------------------------------

let state;
let upstream = 0;

function reset() {
  state = {
    stations: [
      { id: 1, name: 'Harbour', bikes: ['B-101', 'B-102', 'B-103'] },
      { id: 2, name: 'Old Town', bikes: ['B-201'] },
      { id: 3, name: 'University', bikes: [] },
    ],
    bikes: {
      'B-101': { id: 'B-101', model: 'city', battery: 90 },
      'B-102': { id: 'B-102', model: 'cargo', battery: 40 },
      'B-103': { id: 'B-103', model: 'city', battery: 75 },
      'B-201': { id: 'B-201', model: 'electric', battery: 55 },
    },
    rides: [
      { id: 502, bikeId: 'B-201', status: 'ended', fromStation: 1, toStation: 2 },
      { id: 501, bikeId: 'B-101', status: 'ended', fromStation: 2, toStation: 1 },
    ],
    next: 503,
  };
}
reset();

function send(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

function limited(url, res) {
  const raw = url.searchParams.get('limit');
  const limit = raw === null ? 20 : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 50) {
    send(res, 400, { message: 'limit must be between 1 and 50.' });
    return null;
  }
  return limit;
}

function station(id) {
  return state.stations.find((s) => s.id === id);
}

function stationJson(s) {
  return { id: s.id, name: s.name, docked: s.bikes.length };
}

function rest(req, res, body) {
  upstream += 1;
  const url = new URL(req.url, 'http://rest');
  const parts = url.pathname.split('/').filter(Boolean);
  if (req.method === 'GET' && url.pathname === '/stations') {
    const limit = limited(url, res);
    return limit && send(res, 200, state.stations.slice(0, limit).map(stationJson));
  }
  if (req.method === 'GET' && parts[0] === 'stations' && parts.length >= 2) {
    const found = station(Number(parts[1]));
    if (!found) return send(res, 404, { message: `no station ${parts[1]}`, code: 'NOT_FOUND', field: 'stationId' });
    if (parts.length === 2) return send(res, 200, stationJson(found));
    if (parts[2] === 'bikes') return send(res, 200, found.bikes.map((id) => state.bikes[id]));
  }
  if (req.method === 'GET' && parts[0] === 'bikes' && parts[2] === 'rides') {
    if (!state.bikes[parts[1]]) return send(res, 404, { message: `no bike ${parts[1]}`, code: 'NOT_FOUND', field: 'bikeId' });
    return send(res, 200, state.rides.filter((r) => r.bikeId === parts[1]));
  }
  if (req.method === 'GET' && url.pathname === '/rides') {
    const limit = limited(url, res);
    return limit && send(res, 200, state.rides.slice(0, limit));
  }
  if (parts[0] === 'rides' && parts.length >= 2) {
    const ride = state.rides.find((r) => r.id === Number(parts[1]));
    if (!ride) return send(res, 404, { message: `no ride ${parts[1]}`, code: 'NOT_FOUND', field: 'rideId' });
    if (req.method === 'GET' && parts.length === 2) return send(res, 200, ride);
    if (req.method === 'POST' && parts[2] === 'end') {
      const to = station(body.stationId);
      if (!to) return send(res, 404, { message: `no station ${body.stationId}`, code: 'NOT_FOUND', field: 'stationId' });
      if (ride.status !== 'active') return send(res, 409, { message: `ride ${ride.id} has ended already`, code: 'CONFLICT' });
      ride.status = 'ended';
      ride.toStation = to.id;
      to.bikes.push(ride.bikeId);
      return send(res, 200, ride);
    }
  }
  if (req.method === 'POST' && url.pathname === '/rides') {
    const from = state.stations.find((s) => s.bikes.includes(body.bikeId));
    if (!from) return send(res, 409, { message: `bike ${body.bikeId} is not docked anywhere`, code: 'CONFLICT', field: 'bikeId' });
    from.bikes = from.bikes.filter((b) => b !== body.bikeId);
    const ride = { id: state.next++, bikeId: body.bikeId, status: 'active', fromStation: from.id, toStation: null };
    state.rides.unshift(ride);
    return send(res, 201, ride);
  }
  return send(res, 404, { message: `no route ${req.method} ${url.pathname}` });
}

function readJson(req, then) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let body = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch (error) {
      body = {};
    }
    then(body);
  });
}

// -- its OpenAPI document -----------------------------------------------------------------------------

const json = (schema) => ({ content: { 'application/json': { schema } } });
const ridesLink = { rides: { operationId: 'listBikeRides', parameters: { bikeId: '$response.body#/id' } } };
const bikesLink = { bikes: { operationId: 'listStationBikes', parameters: { stationId: '$response.body#/id' } } };
const limit = { name: 'limit', in: 'query', required: false, schema: { type: 'integer' }, description: 'How many (1 to 50).' };
const spec = {
  openapi: '3.0.3',
  info: { title: 'Bike rental', version: '1.0.0' },
  paths: {
    '/stations': {
      get: {
        operationId: 'listStations',
        description: 'Docking stations, in a fixed order.',
        parameters: [limit],
        responses: { 200: { ...json({ type: 'array', items: { $ref: '#/components/schemas/Station' } }), links: bikesLink } },
      },
    },
    '/stations/{stationId}': {
      get: {
        operationId: 'getStation',
        parameters: [{ name: 'stationId', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { 200: { ...json({ $ref: '#/components/schemas/Station' }), links: bikesLink } },
      },
    },
    '/stations/{stationId}/bikes': {
      get: {
        operationId: 'listStationBikes',
        description: 'The bikes docked at a station now, in the order they arrived.',
        parameters: [{ name: 'stationId', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { 200: { ...json({ type: 'array', items: { $ref: '#/components/schemas/Bike' } }), links: ridesLink } },
      },
    },
    '/bikes/{bikeId}/rides': {
      get: {
        operationId: 'listBikeRides',
        description: 'The rides a bike has made, newest first.',
        parameters: [{ name: 'bikeId', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 200: json({ type: 'array', items: { $ref: '#/components/schemas/Ride' } }) },
      },
    },
    '/rides': {
      get: {
        operationId: 'listRides',
        description: 'Rides, newest first.',
        parameters: [limit],
        responses: { 200: json({ type: 'array', items: { $ref: '#/components/schemas/Ride' } }) },
      },
      post: {
        operationId: 'startRide',
        description: 'Take a docked bike out of its station.',
        requestBody: { required: true, ...json({ $ref: '#/components/schemas/RideStart' }) },
        responses: { 201: json({ $ref: '#/components/schemas/Ride' }) },
      },
    },
    '/rides/{rideId}': {
      get: {
        operationId: 'getRide',
        parameters: [{ name: 'rideId', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { 200: json({ $ref: '#/components/schemas/Ride' }) },
      },
    },
    '/rides/{rideId}/end': {
      post: {
        operationId: 'endRide',
        description: 'Dock the ride\'s bike at a station.',
        parameters: [{ name: 'rideId', in: 'path', required: true, schema: { type: 'integer' } }],
        requestBody: { required: true, ...json({ $ref: '#/components/schemas/RideEnd' }) },
        responses: { 200: json({ $ref: '#/components/schemas/Ride' }) },
      },
    },
  },
  components: {
    schemas: {
      Station: {
        type: 'object',
        required: ['id', 'name', 'docked'],
        properties: { id: { type: 'integer' }, name: { type: 'string' }, docked: { type: 'integer' } },
      },
      Bike: {
        type: 'object',
        required: ['id', 'model', 'battery'],
        properties: { id: { type: 'string' }, model: { type: 'string' }, battery: { type: 'integer' } },
      },
      Ride: {
        type: 'object',
        required: ['id', 'bikeId', 'status', 'fromStation'],
        properties: {
          id: { type: 'integer' },
          bikeId: { type: 'string' },
          status: { type: 'string' },
          fromStation: { type: 'integer' },
          toStation: { type: 'integer', nullable: true },
        },
      },
      RideStart: { type: 'object', required: ['bikeId'], properties: { bikeId: { type: 'string' } } },
      RideEnd: { type: 'object', required: ['stationId'], properties: { stationId: { type: 'integer' } } },
    },
  },
};

// -- the gateway --------------------------------------------------------------------------------------

async function main() {
  const restServer = http.createServer((req, res) => readJson(req, (body) => rest(req, res, body)));
  await new Promise((resolve) => restServer.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${restServer.address().port}`;

  const { loadGraphQLSchemaFromOpenAPI } = require('@omnigraph/openapi');
  const { createYoga } = require('graphql-yoga');
  const schema = await loadGraphQLSchemaFromOpenAPI('bikes', { source: spec, endpoint });
  const yoga = createYoga({ schema, graphqlEndpoint: '/graphql', landingPage: false, logging: false, maskedErrors: false });

  const server = http.createServer((req, res) => {
    if (req.url === '/upstream') return send(res, 200, { requests: upstream });
    if (req.url === '/reset' && req.method === 'POST') {
      reset();
      upstream = 0;
      return send(res, 200, { ok: true });
    }
    return yoga(req, res);
  });
  server.listen(port, '127.0.0.1', () => {
    const version = require('@omnigraph/openapi/package.json').version;
    console.log(`bike gateway (@omnigraph/openapi ${version}) on http://127.0.0.1:${port}/graphql, REST at ${endpoint}`);
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
