// A federated warehouse API: Apollo Gateway composing two Apollo Federation subgraphs, served on
// 127.0.0.1:PORT/ (GraphQL at / and /graphql).
//
//   node warehouse.js PORT
//
// - catalog (a subgraph on a free loopback port): products by `sku` (`@key`), each with a `price`, and
//   `products(skip:, take:)`, a skip/take page type `{items, total, hasMore}` with no id, so two pages
//   of one list read alike;
// - inventory (a second subgraph): warehouses (`@key(fields: "id")`, `warehouse(id:)`), and the stock
//   each holds as `StockLevel`s, value objects with no id (a `quantity`, a `reserved` count, a `bin`
//   and a unit cost), many of them equal (two levels of 0); it adds `stockLevels` to `Product` (an
//   entity across subgraphs), so a product's levels in two warehouses come back as look-alikes;
//   writes: `adjustStock` (the level it changed) and `stockTake` (a payload listing every level of a
//   warehouse, counted);
// - `Money` is a value type both subgraphs declare (`@shareable`): a price and a unit cost of EUR 4.50
//   are equal values, never one object.
// POST /reset on the gateway's port puts the stock back as it started.
'use strict';

const { ApolloServer } = require('@apollo/server');
const { listen } = require('./apollo_http');
const { startStandaloneServer } = require('@apollo/server/standalone');
const { ApolloGateway, IntrospectAndCompose } = require('@apollo/gateway');
const { buildSubgraphSchema } = require('@apollo/subgraph');
const gql = require('graphql-tag');

const port = Number(process.argv[2]);
if (!port) {
  console.error('usage: node warehouse.js PORT');
  process.exit(2);
}

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key", "@shareable"])';

const PRODUCTS = [
  ['P1', 'Pallet wrap', 12.0],
  ['P2', 'Packing tape', 4.5],
  ['P3', 'Bubble roll', 19.0],
  ['P4', 'Box, small', 0.8],
  ['P5', 'Box, large', 1.6],
  ['P6', 'Label printer ribbon', 7.25],
  ['P7', 'Stretch film', 12.0],
  ['P8', 'Corner boards', 4.5],
].map(([sku, name, price]) => ({ sku, name, price: { amount: price, currency: 'EUR' } }));

// [warehouse, sku, quantity, bin, unit cost]: levels of 0 and 4 repeat, and P1 is out in both warehouses.
const STOCK = [
  ['W1', 'P1', 0, 'A1', 4.5],
  ['W1', 'P2', 4, 'A2', 2.0],
  ['W1', 'P3', 12, 'B1', 9.0],
  ['W1', 'P4', 0, 'A1', 4.5],
  ['W1', 'P5', 7, 'C3', 0.9],
  ['W1', 'P6', 4, 'A2', 2.0],
  ['W1', 'P7', 3, 'B2', 6.0],
  ['W1', 'P8', 9, 'B2', 2.2],
  ['W2', 'P1', 0, 'A1', 4.5],
  ['W2', 'P3', 5, 'D4', 9.0],
];
let stock;
function reset() {
  stock = STOCK.map(([warehouse, sku, quantity, bin, cost]) => ({
    warehouse, sku, quantity, reserved: 0, bin, unitCost: { amount: cost, currency: 'EUR' },
  }));
}
reset();
const WAREHOUSES = { W1: 'Leeds', W2: 'Bristol' };

const catalog = buildSubgraphSchema([{
  typeDefs: gql(`
    ${LINK}
    "A price or a cost: a value, the same in every subgraph that declares it."
    type Money @shareable {
      amount: Float!
      currency: String!
    }
    type Product @key(fields: "sku") {
      sku: ID!
      name: String!
      price: Money!
    }
    "One page of a list read with skip and take."
    type ProductPage {
      items: [Product!]!
      total: Int!
      hasMore: Boolean!
    }
    type Query {
      "Products in catalogue order, take at a time."
      products(skip: Int! = 0, take: Int! = 3): ProductPage!
      product(sku: ID!): Product
    }
  `),
  resolvers: {
    Query: {
      products: (_, { skip, take }) => ({
        items: PRODUCTS.slice(skip, skip + take),
        total: PRODUCTS.length,
        hasMore: skip + take < PRODUCTS.length,
      }),
      product: (_, { sku }) => PRODUCTS.find((p) => p.sku === sku) || null,
    },
    Product: { __resolveReference: (ref) => PRODUCTS.find((p) => p.sku === ref.sku) },
  },
}]);

const inventory = buildSubgraphSchema([{
  typeDefs: gql(`
    ${LINK}
    type Money @shareable {
      amount: Float!
      currency: String!
    }
    type Warehouse @key(fields: "id") {
      id: ID!
      name: String!
      "Every product's stock level here, in bin order."
      stock: [StockLevel!]!
    }
    "How much of one product one warehouse holds: a value, with no id of its own."
    type StockLevel {
      quantity: Int!
      reserved: Int!
      bin: String!
      unitCost: Money!
      product: Product!
      warehouse: Warehouse!
    }
    type Product @key(fields: "sku") {
      sku: ID!
      "This product's level in every warehouse that stocks it."
      stockLevels: [StockLevel!]!
    }
    "What a stock take counted."
    type StockTake {
      counted: Int!
      levels: [StockLevel!]!
    }
    type Query {
      warehouses: [Warehouse!]!
      warehouse(id: ID!): Warehouse
    }
    type Mutation {
      "Add delta (negative to take away) to a product's stock in a warehouse; answers the level as it is now."
      adjustStock(warehouseId: ID!, sku: ID!, delta: Int!): StockLevel!
      "Count every level of a warehouse."
      stockTake(warehouseId: ID!): StockTake!
    }
  `),
  resolvers: {
    Query: {
      warehouses: () => Object.keys(WAREHOUSES).map((id) => ({ id })),
      warehouse: (_, { id }) => (WAREHOUSES[id] ? { id } : null),
    },
    Warehouse: {
      __resolveReference: (ref) => ({ id: ref.id }),
      name: (w) => WAREHOUSES[w.id],
      stock: (w) => stock.filter((s) => s.warehouse === w.id),
    },
    StockLevel: {
      product: (s) => ({ sku: s.sku }),
      warehouse: (s) => ({ id: s.warehouse }),
    },
    Product: {
      __resolveReference: (ref) => ({ sku: ref.sku }),
      stockLevels: (p) => stock.filter((s) => s.sku === p.sku),
    },
    Mutation: {
      adjustStock: (_, { warehouseId, sku, delta }) => {
        const level = stock.find((s) => s.warehouse === warehouseId && s.sku === sku);
        if (!level) throw new Error(`${warehouseId} does not stock ${sku}`);
        level.quantity = Math.max(0, level.quantity + delta);
        return { ...level };
      },
      stockTake: (_, { warehouseId }) => {
        const levels = stock.filter((s) => s.warehouse === warehouseId).map((s) => ({ ...s }));
        return { counted: levels.length, levels };
      },
    },
  },
}]);

async function main() {
  const subgraphs = [];
  for (const [name, schema] of [['catalog', catalog], ['inventory', inventory]]) {
    const server = new ApolloServer({ schema });
    const { url } = await startStandaloneServer(server, { listen: { port: 0, host: '127.0.0.1' } });
    subgraphs.push({ name, url });
  }
  const gateway = new ApolloGateway({ supergraphSdl: new IntrospectAndCompose({ subgraphs }) });
  const server = new ApolloServer({ gateway, introspection: true });
  await server.start();
  listen(server, port, reset);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
