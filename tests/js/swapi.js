// swapi-graphql (graphql-js's Star Wars reference server, graphql 0.4) served on 127.0.0.1:PORT at / and /graphql.
// Its own bin listens on a random port; this runs the package's schema and its express-graphql the same way,
// on the port the tests chose. The data is the package's bundled cache, so no network is needed.
'use strict';

const path = require('path');

const port = Number(process.argv[2]);
if (!port) {
  console.error('usage: node swapi.js PORT');
  process.exit(2);
}
process.env.NODE_ENV = 'test'; // keeps its "Hit the local cache" log lines quiet
const home = path.dirname(require.resolve('swapi-graphql/package.json'));
const fromSwapi = (name) => require(require.resolve(name, { paths: [home] }));
const express = fromSwapi('express');
const graphqlHTTP = fromSwapi('express-graphql');
const schema = require('swapi-graphql/lib/schema').default;

const app = express();
app.use(['/graphql', '/'], graphqlHTTP(() => ({ schema, graphiql: false })));
app.listen(port, '127.0.0.1', () => console.log(`swapi-graphql listening on http://127.0.0.1:${port}/`));
