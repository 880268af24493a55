// A media library API in the shapes real servers use and dagtools must handle, served on 127.0.0.1:PORT/graphql.
//
//   node app.js PORT          GraphQL Yoga on graphql 16
//   node app.js PORT --old    a plain node:http server on graphql 14, whose introspection knows no
//                             `isRepeatable`, `specifiedByURL` or `args(includeDeprecated:)`
//   node app.js PORT --no-introspection
//                             GraphQL Yoga refusing introspection, as production servers often do
//
// Shapes: a union and an interface whose members conflict on field types (`rating` is Int on Movie and
// Float on Album; `tags` is String on Movie and [String] on Album), a mutation that returns the object it
// changes, an enum, custom scalars, a non-null list of non-null objects, a Relay `Node` interface whose
// global ID field is `nodeId` with the primary key in `id` (root `node(nodeId: ID!)` and `movieById(id:)`,
// as PostGraphile generates them), a Relay connection, mutation payload types, and a list of 40
// articles with long text and timestamps. State lives in this process: mutations change it.
'use strict';

const http = require('http');

const port = Number(process.argv[2]);
const old = process.argv.includes('--old');
const noIntrospection = process.argv.includes('--no-introspection');
if (!port) {
  console.error('usage: node app.js PORT [--old]');
  process.exit(2);
}
const graphql = old ? require('graphql14') : require('graphql');

// What graphql 14 cannot express: a scalar's specification URL and a deprecated argument.
const specifiedBy = old ? '' : ' @specifiedBy(url: "https://datatracker.ietf.org/doc/html/rfc3339")';
const genreName = old ? '' : ', genreName: String @deprecated(reason: "Use genre.")';

const SDL = `
"""A point in time, as an ISO 8601 string such as 2020-01-31T12:00:00Z."""
scalar Datetime${specifiedBy}

"""An opaque position in a connection, used with \`after\`."""
scalar Cursor

enum Genre { DRAMA COMEDY JAZZ ROCK }

enum MoviesOrderBy { PRIMARY_KEY_ASC PRIMARY_KEY_DESC TITLE_ASC TITLE_DESC }

"""An object with a globally unique ID."""
interface Node {
  """A globally unique identifier. Can be used in various places throughout the system to identify this single value."""
  nodeId: ID!
}

"""Something with a title that can be rated."""
interface Media {
  title: String!
}

union SearchResult = Movie | Album | Person

type Query implements Node {
  nodeId: ID!
  """Exposes the root query type nested one level down."""
  query: Query!
  """Fetches an object given its globally unique ID."""
  node(nodeId: ID!): Node
  movieById(id: Int!): Movie
  albumById(id: Int!): Album
  personById(id: Int!): Person
  articleById(id: Int!): Article
  """Reads a single Movie using its globally unique ID."""
  movie(nodeId: ID!): Movie
  """Reads and enables pagination through a set of Movie."""
  allMovies(first: Int, after: Cursor, offset: Int, orderBy: [MoviesOrderBy!] = [PRIMARY_KEY_ASC], genre: Genre${genreName}): MoviesConnection
  """Movies, albums and people whose name contains the text."""
  search(text: String!): [SearchResult!]!
  """Every movie and album."""
  media: [Media!]!
  """The movies on the front page."""
  featured: [Movie!]!
  """Every article, newest first."""
  articles: [Article!]!
}

type Movie implements Node & Media {
  nodeId: ID!
  id: Int!
  title: String!
  """Stars out of five, whole numbers only."""
  rating: Int
  """Comma-separated tags."""
  tags: String
  genre: Genre!
  tagline: String
  releasedAt: Datetime
  director: Person
}

type Album implements Node & Media {
  nodeId: ID!
  id: Int!
  title: String!
  """Average listener rating out of five."""
  rating: Float
  tags: [String]
  genre: Genre!
  releasedAt: Datetime
  artist: Person
}

type Person implements Node {
  nodeId: ID!
  id: Int!
  name: String!
  born: Datetime
}

type Article implements Node {
  nodeId: ID!
  id: Int!
  title: String!
  body: String!
  publishedAt: Datetime!
  updatedAt: Datetime!
}

"""A connection to a list of Movie values."""
type MoviesConnection {
  nodes: [Movie]!
  edges: [MoviesEdge!]!
  pageInfo: PageInfo!
  totalCount: Int!
}

type MoviesEdge {
  cursor: Cursor
  node: Movie
}

type PageInfo {
  hasNextPage: Boolean!
  hasPreviousPage: Boolean!
  startCursor: Cursor
  endCursor: Cursor
}

input MoviePatch {
  title: String
  rating: Int
  genre: Genre
  tagline: String
}

input UpdateMovieByIdInput {
  clientMutationId: String
  id: Int!
  moviePatch: MoviePatch!
}

input UpdateMovieInput {
  clientMutationId: String
  nodeId: ID!
  moviePatch: MoviePatch!
}

type UpdateMoviePayload {
  clientMutationId: String
  movie: Movie
  query: Query
}

type Mutation {
  """Sets a movie's rating and returns the movie."""
  rateMovie(id: Int!, rating: Int!): Movie!
  """Rates a movie or an album, given its nodeId, and returns it."""
  rateMedia(nodeId: ID!, rating: Float!): Media!
  """Updates a single Movie using a unique key and a patch."""
  updateMovieById(input: UpdateMovieByIdInput!): UpdateMoviePayload
  """Updates a single Movie using its globally unique id and a patch."""
  updateMovie(input: UpdateMovieInput!): UpdateMoviePayload
}
`;

// -- data ----------------------------------------------------------------------------------------------

const encode = (table, id) => Buffer.from(JSON.stringify([table, id])).toString('base64');
const decode = (nodeId) => {
  try {
    const [table, id] = JSON.parse(Buffer.from(String(nodeId), 'base64').toString('utf8'));
    return typeof table === 'string' && Number.isInteger(id) ? [table, id] : null;
  } catch (error) {
    return null;
  }
};

const people = ['Ada Wong', 'Ben Okri', 'Chen Yu', 'Dora Maar', 'Emil Nolde'].map((name, i) => ({
  __typename: 'Person',
  id: i + 1,
  name,
  born: `19${50 + i}-0${(i % 9) + 1}-1${i}T00:00:00Z`,
}));
const genres = ['DRAMA', 'COMEDY'];
const movies = Array.from({ length: 12 }, (_, i) => ({
  __typename: 'Movie',
  id: i + 1,
  title: `Movie ${String.fromCharCode(65 + i)}`,
  rating: (i % 5) + 1,
  tags: i % 2 ? 'classic,restored' : 'new',
  genre: genres[i % 2],
  tagline: i === 0 ? null : `The ${i + 1}th story`,
  releasedAt: `20${10 + i}-05-0${(i % 9) + 1}T20:00:00Z`,
  directorId: (i % people.length) + 1,
}));
const albums = Array.from({ length: 4 }, (_, i) => ({
  __typename: 'Album',
  id: i + 1,
  title: `Album ${i + 1}`,
  rating: 3.5 + i / 4,
  tags: ['live', `vol ${i + 1}`],
  genre: i % 2 ? 'ROCK' : 'JAZZ',
  releasedAt: `199${i}-11-2${i}T10:00:00Z`,
  artistId: ((i + 2) % people.length) + 1,
}));
const lorem =
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore ' +
  'magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo ' +
  'consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. ';
const articles = Array.from({ length: 40 }, (_, i) => ({
  __typename: 'Article',
  id: 40 - i,
  title: `Article number ${40 - i} about the library`,
  body: `${40 - i}. ${lorem.repeat(3)}`,
  publishedAt: `2024-0${(i % 9) + 1}-${String((i % 28) + 1).padStart(2, '0')}T08:30:00Z`,
  updatedAt: `2025-0${(i % 9) + 1}-${String((i % 28) + 1).padStart(2, '0')}T09:45:00Z`,
}));
const tables = { people, movies, albums, articles };
const tableOf = { Person: 'people', Movie: 'movies', Album: 'albums', Article: 'articles' };
const byId = (rows, id) => rows.find((row) => row.id === id) || null;

// Fields computed from a row; everything else is read from the row by graphql's default resolver.
const computed = {
  nodeId: (row) => encode(tableOf[row.__typename], row.id),
  director: (row) => byId(people, row.directorId),
  artist: (row) => byId(people, row.artistId),
};

const queryRoot = {
  nodeId: () => 'query',
  query: () => queryRoot,
  node: ({ nodeId }) => {
    if (nodeId === 'query') return { __typename: 'Query', ...queryRoot };
    const key = decode(nodeId);
    return key && tables[key[0]] ? byId(tables[key[0]], key[1]) : null;
  },
  movieById: ({ id }) => byId(movies, id),
  albumById: ({ id }) => byId(albums, id),
  personById: ({ id }) => byId(people, id),
  articleById: ({ id }) => byId(articles, id),
  movie: ({ nodeId }) => {
    const key = decode(nodeId);
    return key && key[0] === 'movies' ? byId(movies, key[1]) : null;
  },
  allMovies: ({ first, after, offset, orderBy, genre, genreName }) => {
    const wanted = genre || genreName;
    let rows = movies.filter((movie) => !wanted || movie.genre === wanted);
    const order = (orderBy || ['PRIMARY_KEY_ASC'])[0];
    const key = order.startsWith('TITLE') ? 'title' : 'id';
    rows = [...rows].sort((a, b) => (a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0));
    if (order.endsWith('_DESC')) rows.reverse();
    let start = offset || 0;
    if (after != null) {
      const position = Number(Buffer.from(String(after), 'base64').toString('utf8').replace('cursor:', ''));
      if (!Number.isInteger(position)) throw new Error(`Invalid cursor: ${after}`);
      start = position + 1;
    }
    const end = first == null ? rows.length : Math.min(rows.length, start + first);
    const cursor = (index) => Buffer.from(`cursor:${index}`).toString('base64');
    const page = rows.slice(start, end).map((node, i) => ({ cursor: cursor(start + i), node }));
    return {
      nodes: page.map((edge) => edge.node),
      edges: page,
      totalCount: rows.length,
      pageInfo: {
        hasNextPage: end < rows.length,
        hasPreviousPage: start > 0,
        startCursor: page.length ? page[0].cursor : null,
        endCursor: page.length ? page[page.length - 1].cursor : null,
      },
    };
  },
  search: ({ text }) => {
    const needle = text.toLowerCase();
    return [...movies, ...albums, ...people].filter((row) => (row.title || row.name).toLowerCase().includes(needle));
  },
  media: () => [...movies, ...albums],
  featured: () => movies.slice(0, 3),
  articles: () => articles,
};

function patchMovie(movie, patch) {
  if (movie == null) return null;
  if (patch.rating != null && (patch.rating < 1 || patch.rating > 5)) throw new Error('rating must be between 1 and 5');
  Object.assign(movie, Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)));
  return movie;
}

const mutationRoot = {
  rateMovie: ({ id, rating }) => {
    const movie = byId(movies, id);
    if (movie == null) throw new Error(`No movie with id ${id}`);
    return patchMovie(movie, { rating });
  },
  rateMedia: ({ nodeId, rating }) => {
    const key = decode(nodeId);
    const row = key && ['movies', 'albums'].includes(key[0]) ? byId(tables[key[0]], key[1]) : null;
    if (row == null) throw new Error(`No movie or album with nodeId ${nodeId}`);
    if (row.__typename === 'Movie') return patchMovie(row, { rating: Math.round(rating) });
    row.rating = rating;
    return row;
  },
  updateMovieById: ({ input }) => {
    const movie = patchMovie(byId(movies, input.id), input.moviePatch);
    if (movie == null) throw new Error(`No values were updated in collection 'movies' because no values you can update were found matching these criteria.`);
    return { clientMutationId: input.clientMutationId, movie, query: queryRoot };
  },
  updateMovie: ({ input }) => {
    const key = decode(input.nodeId);
    const movie = patchMovie(key && key[0] === 'movies' ? byId(movies, key[1]) : null, input.moviePatch);
    if (movie == null) throw new Error(`No values were updated in collection 'movies' because no values you can update were found matching these criteria.`);
    return { clientMutationId: input.clientMutationId, movie, query: queryRoot };
  },
};

// -- schema: resolvers attached to the SDL's fields, the same way on graphql 14 and 16 -------------------

const schema = graphql.buildSchema(SDL);
for (const [typeName, root] of [['Query', queryRoot], ['Mutation', mutationRoot]]) {
  const fields = schema.getType(typeName).getFields();
  for (const [name, resolve] of Object.entries(root)) fields[name].resolve = (_source, args) => resolve(args);
}
for (const type of Object.values(schema.getTypeMap())) {
  if (!(type instanceof graphql.GraphQLObjectType) || type.name.startsWith('__') || type.name === 'Query') continue;
  const fields = type.getFields();
  for (const [name, compute] of Object.entries(computed)) if (fields[name]) fields[name].resolve = compute;
}

// -- servers -------------------------------------------------------------------------------------------

function serveOld() {
  // What express-graphql did on graphql 14: 400 with the errors when the document does not validate.
  return http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      let payload;
      try {
        payload = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch (error) {
        res.writeHead(400, { 'Content-Type': 'application/json' });
        return res.end(JSON.stringify({ errors: [{ message: 'POST body sent invalid JSON.' }] }));
      }
      const result = await graphql.graphql(schema, payload.query || '', null, {}, payload.variables, payload.operationName);
      res.writeHead(result.data === undefined ? 400 : 200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(result));
    });
  });
}

function serveYoga() {
  const { createYoga } = require('graphql-yoga');
  const refuseIntrospection = { onValidate: ({ addValidationRule }) => addValidationRule(graphql.NoSchemaIntrospectionCustomRule) };
  const yoga = createYoga({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    logging: false,
    maskedErrors: false,
    plugins: noIntrospection ? [refuseIntrospection] : [],
  });
  return http.createServer(yoga);
}

const server = old ? serveOld() : serveYoga();
server.listen(port, '127.0.0.1', () => {
  const version = old ? require('graphql14/package.json').version : require('graphql/package.json').version;
  console.log(`media app (graphql ${version}${old ? ', old' : ', yoga'}) listening on http://127.0.0.1:${port}/graphql`);
});
