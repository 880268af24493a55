// A wildlife park API on Mercurius (Fastify's GraphQL plugin), served on 127.0.0.1:PORT/graphql.
//
//   node mercurius.js PORT
//
// Shapes that decide what a model reads after a call, as real APIs have them:
// - mutation payloads: `createSighting` refuses bad input with user errors (`errors: [UserError!]!`)
//   and a null `sighting`, as Shopify- and Saleor-style APIs do; `closeIssue` returns a payload whose
//   `issue` has a `state` enum, as GitHub's does; `reportIssue` answers a union of the new issue and
//   an error type; `recordVisit` counts a visit and then fails to show its receipt (a non-null
//   `total` refused), which takes its whole non-null payload down after the write was made;
// - partial answers: `Park.budget` and `Stats.revenue` (nullable) fail with a FORBIDDEN error while the
//   other fields resolve; `Issue.estimate` does too, inside a payload; `sightings` is a list some of
//   whose items fail (one item's resolver throws, another's non-null `species` does);
// - a Relay `Node` interface with `node(id:)`.
// State lives in this process: mutations change it.
'use strict';

const port = Number(process.argv[2]);
if (!port) {
  console.error('usage: node mercurius.js PORT');
  process.exit(2);
}

const Fastify = require('fastify');
const mercurius = require('mercurius');
const { ErrorWithProps } = mercurius;

const schema = `
"""An object with a globally unique ID."""
interface Node { id: ID! }

enum IssueState { OPEN CLOSED }

"""A park visitors can see animals in."""
type Park implements Node {
  id: ID!
  name: String!
  """The park's yearly budget; rangers only."""
  budget: Float
  """Visitor figures."""
  stats: Stats
  """Every sighting reported in the park; some reports are still under review and cannot be read."""
  sightings: [Sighting]
}

"""A park's figures."""
type Stats {
  visitors: Int!
  """Ticket revenue; finance staff only."""
  revenue: Float
  month: String
}

"""An animal seen in a park."""
type Sighting implements Node {
  id: ID!
  species: String!
  count: Int!
  place: String
}

"""Something to fix in a park."""
type Issue implements Node {
  id: ID!
  number: Int!
  title: String!
  state: IssueState!
  """Hours of work; planners only."""
  estimate: Int
}

"""Why the API refused to do something."""
type UserError {
  """What went wrong, for a person to read."""
  message: String!
  """The input field at fault, as a path."""
  field: [String!]
  code: String
}

type CreateSightingPayload {
  """The new sighting, or null when the input was refused (see errors)."""
  sighting: Sighting
  """Why the input was refused; empty on success."""
  errors: [UserError!]!
  clientMutationId: String
}

type CloseIssuePayload {
  """The closed issue."""
  issue: Issue
  clientMutationId: String
}

"""An input the API refused."""
type InputProblem {
  message: String!
  field: String
}

union ReportIssueResult = Issue | InputProblem

type Receipt {
  number: Int!
  """What the visit cost; finance staff only."""
  total: Float!
}

type VisitPayload {
  visitors: Int!
  receipt: Receipt!
}

input CreateSightingInput {
  parkId: ID!
  species: String!
  count: Int!
  place: String
  clientMutationId: String
}

input CloseIssueInput {
  issueId: ID!
  clientMutationId: String
}

type Query {
  """Fetches an object given its ID."""
  node(id: ID!): Node
  park(name: String!): Park
  parks: [Park!]!
  issue(number: Int!): Issue
  issues: [Issue!]!
}

type Mutation {
  """Reports a sighting; refuses a count below 1 or an unknown species with user errors."""
  createSighting(input: CreateSightingInput!): CreateSightingPayload!
  """Closes an issue."""
  closeIssue(input: CloseIssueInput!): CloseIssuePayload
  """Reports an issue; refuses an empty title with an InputProblem."""
  reportIssue(title: String!): ReportIssueResult!
  """Counts one visit to a park."""
  recordVisit(parkId: ID!): VisitPayload!
}
`;

// -- data ----------------------------------------------------------------------------------------------

const globalId = (type, key) => Buffer.from(`${type}:${key}`).toString('base64');
const fromGlobalId = (id) => {
  const text = Buffer.from(String(id), 'base64').toString('utf8');
  const at = text.indexOf(':');
  return at > 0 ? [text.slice(0, at), text.slice(at + 1)] : [null, null];
};

const SPECIES = ['heron', 'otter', 'lynx', 'beaver', 'kingfisher'];
const parks = [
  { key: 'yellow', name: 'Yellow Marsh', budget: 1200000, stats: { visitors: 5400, revenue: 81000.5, month: '2025-05' } },
  { key: 'stone', name: 'Stone Valley', budget: 800000, stats: { visitors: 2100, revenue: 30100, month: '2025-05' } },
];
const sightings = [
  { key: 1, park: 'yellow', species: 'heron', count: 3, place: 'north pond' },
  { key: 2, park: 'yellow', species: 'otter', count: 1, place: 'river bend' },
  { key: 3, park: 'yellow', species: 'lynx', count: 1, place: null, review: 'Sighting 3 is under review' },
  { key: 4, park: 'yellow', species: 'beaver', count: 2, place: 'dam' },
  { key: 5, park: 'yellow', species: null, count: 4, place: 'reeds' }, // a broken row: species fails
  { key: 6, park: 'yellow', species: 'kingfisher', count: 1, place: 'bridge' },
  { key: 7, park: 'stone', species: 'lynx', count: 2, place: 'ridge' },
];
const issues = [
  { key: 1, title: 'Broken fence at the north pond', state: 'OPEN', estimate: 6 },
  { key: 2, title: 'Bridge planks loose', state: 'OPEN', estimate: 3 },
  { key: 3, title: 'Bins overflow', state: 'CLOSED', estimate: 1 },
];

const forbidden = (what) => new ErrorWithProps(`Not allowed to see ${what}`, { code: 'FORBIDDEN' });
const find = (type, key) => {
  if (type === 'Park') return parks.find((p) => p.key === key) || null;
  if (type === 'Sighting') return sightings.find((s) => String(s.key) === key) || null;
  if (type === 'Issue') return issues.find((i) => String(i.key) === key) || null;
  return null;
};
const typed = (type, row) => (row ? { __type: type, ...row } : null);

const resolvers = {
  Node: { resolveType: (row) => row.__type },
  ReportIssueResult: { resolveType: (row) => row.__type },
  Query: {
    node: (_, { id }) => {
      const [type, key] = fromGlobalId(id);
      return typed(type, find(type, key));
    },
    park: (_, { name }) => typed('Park', parks.find((p) => p.name === name)),
    parks: () => parks.map((p) => typed('Park', p)),
    issue: (_, { number }) => typed('Issue', issues.find((i) => i.key === number)),
    issues: () => issues.map((i) => typed('Issue', i)),
  },
  Park: {
    id: (park) => globalId('Park', park.key),
    budget: () => {
      throw forbidden('the budget');
    },
    sightings: (park) =>
      sightings.filter((s) => s.park === park.key).map((s) => (s.review ? new Error(s.review) : typed('Sighting', s))),
  },
  Receipt: {
    total: () => {
      throw forbidden('receipt totals');
    },
  },
  Stats: {
    revenue: () => {
      throw forbidden('revenue');
    },
  },
  Sighting: {
    id: (row) => globalId('Sighting', row.key),
    species: (row) => {
      if (row.species == null) throw new Error(`Sighting ${row.key} has no species on record`);
      return row.species;
    },
  },
  Issue: {
    id: (row) => globalId('Issue', row.key),
    number: (row) => row.key,
    estimate: () => {
      throw forbidden('estimates');
    },
  },
  Mutation: {
    createSighting: (_, { input }) => {
      const errors = [];
      const [type, key] = fromGlobalId(input.parkId);
      const park = type === 'Park' ? find('Park', key) : null;
      if (!park) errors.push({ message: 'No park has this id', field: ['input', 'parkId'], code: 'NOT_FOUND' });
      if (!SPECIES.includes(input.species)) {
        errors.push({ message: `Unknown species "${input.species}"; known: ${SPECIES.join(', ')}`, field: ['input', 'species'], code: 'INVALID' });
      }
      if (input.count < 1) errors.push({ message: 'Count must be at least 1', field: ['input', 'count'], code: 'INVALID' });
      if (errors.length) return { sighting: null, errors, clientMutationId: input.clientMutationId };
      const row = { key: sightings.length + 1, park: park.key, species: input.species, count: input.count, place: input.place ?? null };
      sightings.push(row);
      return { sighting: typed('Sighting', row), errors: [], clientMutationId: input.clientMutationId };
    },
    closeIssue: (_, { input }) => {
      const [type, key] = fromGlobalId(input.issueId);
      const issue = type === 'Issue' ? find('Issue', key) : null;
      if (!issue) throw new ErrorWithProps(`${input.issueId} is not the id of an issue`, { code: 'NOT_FOUND' });
      issue.state = 'CLOSED';
      return { issue: typed('Issue', issue), clientMutationId: input.clientMutationId };
    },
    recordVisit: (_, { parkId }) => {
      const [type, key] = fromGlobalId(parkId);
      const park = type === 'Park' ? find('Park', key) : null;
      if (!park) throw new ErrorWithProps(`${parkId} is not the id of a park`, { code: 'NOT_FOUND' });
      park.stats.visitors += 1;
      return { visitors: park.stats.visitors, receipt: { number: park.stats.visitors } };
    },
    reportIssue: (_, { title }) => {
      if (!title.trim()) return { __type: 'InputProblem', message: 'A title is required', field: 'title' };
      const row = { key: issues.length + 1, title, state: 'OPEN', estimate: null };
      issues.push(row);
      return typed('Issue', row);
    },
  },
};

const app = Fastify({ logger: false });
app.register(mercurius, { schema, resolvers, path: '/graphql', graphiql: false });
app.listen({ port, host: '127.0.0.1' }).then(() => {
  const version = require('mercurius/package.json').version;
  console.log(`park app (mercurius ${version}, fastify ${require('fastify/package.json').version}) on http://127.0.0.1:${port}/graphql`);
});
