// A shop's orders API, built code-first with Pothos and served by Apollo Server, on
// 127.0.0.1:PORT/ (GraphQL at any path).
//
//   node orders.js PORT
//
// What it has that looks alike without being one object:
// - `orders(skip:, take:)`, a skip/take page type `{items, total, hasMore}` with no id;
// - `OrderLine`, a value with no id (a quantity, a unit price, a product): most lines are 1 x 5.0;
// - `Order.delivery` and `deliveries`, a union of two value types (`Parcel`, `Pickup`), and
//   `Order.adjustments`, an interface (`Adjustment`) of two more: two parcels of 2 kg with one
//   carrier, or two 10% discounts, read alike; each has a field with an argument
//   (`Parcel.tracking(format:)`, `Adjustment.explain(lang:)`) that only that one answers;
// - `reorder(orderId:)`, a write whose payload lists the new order's lines, equal to the old ones'.
// POST /reset puts the data back as it started.
'use strict';

const { ApolloServer } = require('@apollo/server');
const { listen } = require('./apollo_http');
const SchemaBuilder = require('@pothos/core').default;

const port = Number(process.argv[2]);
if (!port) {
  console.error('usage: node orders.js PORT');
  process.exit(2);
}

const PRODUCTS = { p1: 'Oat milk', p2: 'Rye bread', p3: 'Apples', p4: 'Coffee beans' };
let orders;
let serial;
function reset() {
  serial = 0;
  const line = (product, quantity = 1, unitPrice = 5.0) => ({ serial: ++serial, product, quantity, unitPrice });
  const parcel = () => ({ kind: 'parcel', serial: ++serial, carrier: 'DPD', weightKg: 2.0 });
  const pickup = () => ({ kind: 'pickup', serial: ++serial, store: 'Market Street' });
  const discount = () => ({ kind: 'discount', serial: ++serial, amount: -0.5, percent: 10 });
  const fee = () => ({ kind: 'fee', serial: ++serial, amount: 1.5, reason: 'bag' });
  orders = [
    { id: 'o1', number: 1001, status: 'SHIPPED', lines: [line('p1'), line('p2'), line('p3')], delivery: parcel(), adjustments: [discount(), fee()] },
    { id: 'o2', number: 1002, status: 'SHIPPED', lines: [line('p2'), line('p4')], delivery: parcel(), adjustments: [discount()] },
    { id: 'o3', number: 1003, status: 'OPEN', lines: [line('p1'), line('p3', 2, 2.5)], delivery: pickup(), adjustments: [fee()] },
    { id: 'o4', number: 1004, status: 'OPEN', lines: [line('p4')], delivery: pickup(), adjustments: [discount()] },
    { id: 'o5', number: 1005, status: 'OPEN', lines: [line('p1'), line('p2')], delivery: parcel(), adjustments: [] },
    { id: 'o6', number: 1006, status: 'OPEN', lines: [line('p3')], delivery: parcel(), adjustments: [fee()] },
  ];
  for (const order of orders) {
    for (const part of [...order.lines, order.delivery, ...order.adjustments]) part.order = order.id;
  }
}
reset();

const builder = new SchemaBuilder({});

const Product = builder.objectRef('Product').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
  }),
});
const product = (id) => ({ id, name: PRODUCTS[id] });
const order = (id) => orders.find((o) => o.id === id) || null;

const Order = builder.objectRef('Order');

const OrderLine = builder.objectRef('OrderLine').implement({
  description: 'One line of an order: a value with no id of its own.',
  fields: (t) => ({
    quantity: t.exposeInt('quantity'),
    unitPrice: t.exposeFloat('unitPrice'),
    product: t.field({ type: Product, resolve: (l) => product(l.product) }),
    order: t.field({ type: Order, resolve: (l) => order(l.order) }),
  }),
});

const Parcel = builder.objectRef('Parcel').implement({
  description: 'Sent by a carrier.',
  fields: (t) => ({
    carrier: t.exposeString('carrier'),
    weightKg: t.exposeFloat('weightKg'),
    tracking: t.string({
      description: 'The tracking code, long or short.',
      args: { format: t.arg.string({ defaultValue: 'short' }) },
      resolve: (p, { format }) => (format === 'long' ? `TRACK-${p.order}-${p.serial}` : `T${p.serial}`),
    }),
    order: t.field({ type: Order, resolve: (p) => order(p.order) }),
  }),
});
const Pickup = builder.objectRef('Pickup').implement({
  description: 'Collected at a store.',
  fields: (t) => ({
    store: t.exposeString('store'),
    order: t.field({ type: Order, resolve: (p) => order(p.order) }),
  }),
});
const Delivery = builder.unionType('Delivery', {
  types: [Parcel, Pickup],
  resolveType: (d) => (d.kind === 'parcel' ? Parcel : Pickup),
});

const Adjustment = builder.interfaceRef('Adjustment').implement({
  description: 'Something that changes an order total.',
  fields: (t) => ({
    amount: t.exposeFloat('amount'),
    explain: t.string({
      args: { lang: t.arg.string({ defaultValue: 'en' }) },
      resolve: (a, { lang }) => `${lang}: adjustment ${a.serial} on ${a.order}`,
    }),
  }),
  resolveType: (a) => (a.kind === 'discount' ? 'Discount' : 'Fee'),
});
builder.objectType('Discount', {
  interfaces: [Adjustment],
  isTypeOf: (a) => a.kind === 'discount',
  fields: (t) => ({ percent: t.exposeInt('percent') }),
});
builder.objectType('Fee', {
  interfaces: [Adjustment],
  isTypeOf: (a) => a.kind === 'fee',
  fields: (t) => ({ reason: t.exposeString('reason') }),
});

Order.implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    number: t.exposeInt('number'),
    status: t.exposeString('status'),
    lines: t.field({ type: [OrderLine], resolve: (o) => o.lines }),
    delivery: t.field({ type: Delivery, resolve: (o) => o.delivery }),
    adjustments: t.field({ type: [Adjustment], resolve: (o) => o.adjustments }),
  }),
});

const OrderPage = builder.objectRef('OrderPage').implement({
  description: 'One page of orders, read with skip and take.',
  fields: (t) => ({
    items: t.field({ type: [Order], resolve: (p) => p.items }),
    total: t.exposeInt('total'),
    hasMore: t.exposeBoolean('hasMore'),
  }),
});

const ReorderPayload = builder.objectRef('ReorderPayload').implement({
  fields: (t) => ({
    order: t.field({ type: Order, resolve: (p) => p.order }),
    lines: t.field({ type: [OrderLine], resolve: (p) => p.order.lines }),
  }),
});

builder.queryType({
  fields: (t) => ({
    orders: t.field({
      type: OrderPage,
      args: { skip: t.arg.int({ required: true, defaultValue: 0 }), take: t.arg.int({ required: true, defaultValue: 2 }) },
      resolve: (_, { skip, take }) => ({
        items: orders.slice(skip, skip + take),
        total: orders.length,
        hasMore: skip + take < orders.length,
      }),
    }),
    order: t.field({ type: Order, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }) => order(String(id)) }),
    product: t.field({ type: Product, nullable: true, args: { id: t.arg.id({ required: true }) }, resolve: (_, { id }) => (PRODUCTS[id] ? product(String(id)) : null) }),
    deliveries: t.field({ type: [Delivery], description: 'Every delivery, in order number order.', resolve: () => orders.map((o) => o.delivery) }),
  }),
});

builder.mutationType({
  fields: (t) => ({
    reorder: t.field({
      type: ReorderPayload,
      description: 'Place a new order with the same lines as an old one.',
      args: { orderId: t.arg.id({ required: true }) },
      resolve: (_, { orderId }) => {
        const old = order(String(orderId));
        if (!old) throw new Error(`no order ${orderId}`);
        const id = `o${orders.length + 1}`;
        const made = {
          id, number: 1000 + orders.length + 1, status: 'OPEN',
          lines: old.lines.map((l) => ({ ...l, serial: ++serial, order: id })),
          delivery: { ...old.delivery, serial: ++serial, order: id },
          adjustments: [],
        };
        orders.push(made);
        return { order: made };
      },
    }),
  }),
});

async function main() {
  const server = new ApolloServer({ schema: builder.toSchema(), introspection: true });
  await server.start();
  listen(server, port, reset);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
