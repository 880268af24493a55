// A conference's workshops on TypeGraphQL (classes and decorators) with class-validator checking
// its inputs, served by GraphQL Yoga on 127.0.0.1:PORT/graphql.
//
//   node workshops.js PORT
//
// Shapes: `Workshop` and `Talk` implement the `Session` interface, and the only lookup of either is
// `session(id:): Session`; `Room` and `Kit` are reached again only through `bookable(id:): Bookable`,
// a union; a `Comment` has an id but no lookup at all (it is reached through its workshop). Writes
// answer with what they changed: `book` in a payload that nests it (`BookingPayload.booking.workshop`),
// `bookMany` as a list, `reserveRoom` a payload holding a union member, `editComment` a payload holding
// the comment. `addComment` and `editComment` take inputs class-validator checks: a comment over 280
// characters or an author over 60 is refused with TypeGraphQL's `Argument Validation Error`, whose
// extensions echo the input (`validationErrors[i].target`, `.value`) before the rule that failed
// (`.constraints`).
// State lives in this process: writes change it.
//
// Plain JavaScript, so the decorators are applied with `Reflect.decorate`, as TypeScript's compiled
// output applies them, and every type is given explicitly (no emitted design-time types).
'use strict';

require('reflect-metadata');
const fs = require('fs');
const http = require('http');
const path = require('path');
const { createYoga } = require('graphql-yoga');
const {
  Arg,
  Field,
  ID,
  InputType,
  Int,
  InterfaceType,
  Mutation,
  ObjectType,
  Query,
  Resolver,
  buildSchema,
  createUnionType,
} = require('type-graphql');
const { IsNotEmpty, MaxLength } = require('class-validator');

const port = Number(process.argv[2]);
if (!port) {
  console.error('usage: node workshops.js PORT');
  process.exit(2);
}

function field(target, name, type, options) {
  Reflect.decorate([Field(type, options)], target.prototype, name);
}

function method(target, name, decorator, args) {
  args.forEach((arg, index) => arg(target.prototype, name, index));
  const descriptor = Object.getOwnPropertyDescriptor(target.prototype, name);
  Object.defineProperty(target.prototype, name, Reflect.decorate([decorator], target.prototype, name, descriptor) || descriptor);
}

// -- types ------------------------------------------------------------------------------------------

class Session {
  constructor(values) {
    Object.assign(this, values);
  }
}
Reflect.decorate([InterfaceType({ description: 'A slot in the programme: a workshop or a talk.' })], Session);
field(Session, 'id', () => ID);
field(Session, 'title', () => String);
field(Session, 'startsAt', () => String, { description: 'Start time, HH:MM on the conference day.' });

class Comment {
  constructor(values) {
    Object.assign(this, values);
  }
}
Reflect.decorate([ObjectType({ description: 'A comment left on a workshop.' })], Comment);
field(Comment, 'id', () => ID);
field(Comment, 'author', () => String);
field(Comment, 'text', () => String);

class Workshop extends Session {}
Reflect.decorate([ObjectType({ implements: Session, description: 'A hands-on workshop with a fixed number of seats.' })], Workshop);
field(Workshop, 'seatsLeft', () => Int, { description: 'Seats still free.' });
field(Workshop, 'capacity', () => Int);
field(Workshop, 'comments', () => [Comment]);

class Talk extends Session {}
Reflect.decorate([ObjectType({ implements: Session, description: 'A talk: no booking needed.' })], Talk);
field(Talk, 'speaker', () => String);

class Room {
  constructor(values) {
    Object.assign(this, values);
  }
}
Reflect.decorate([ObjectType({ description: 'A room that can be reserved.' })], Room);
field(Room, 'id', () => ID);
field(Room, 'name', () => String);
field(Room, 'floor', () => Int);
field(Room, 'reservedBy', () => String, { nullable: true, description: 'Who reserved it; null while free.' });

class Kit {
  constructor(values) {
    Object.assign(this, values);
  }
}
Reflect.decorate([ObjectType({ description: 'Equipment lent out for a workshop.' })], Kit);
field(Kit, 'id', () => ID);
field(Kit, 'name', () => String);
field(Kit, 'available', () => Int);

const Bookable = createUnionType({ name: 'Bookable', description: 'Something that can be reserved.', types: () => [Room, Kit] });

class Booking {
  constructor(values) {
    Object.assign(this, values);
  }
}
Reflect.decorate([ObjectType({ description: 'A seat booked on a workshop.' })], Booking);
field(Booking, 'id', () => ID);
field(Booking, 'attendee', () => String);
field(Booking, 'workshop', () => Workshop);

class BookingPayload {
  constructor(values) {
    Object.assign(this, values);
  }
}
Reflect.decorate([ObjectType()], BookingPayload);
field(BookingPayload, 'booking', () => Booking, { nullable: true });
field(BookingPayload, 'message', () => String);

class ReservationPayload {
  constructor(values) {
    Object.assign(this, values);
  }
}
Reflect.decorate([ObjectType()], ReservationPayload);
field(ReservationPayload, 'room', () => Room);
field(ReservationPayload, 'message', () => String);

// -- inputs, checked by class-validator ---------------------------------------------------------------

class CommentInput {}
Reflect.decorate([InputType({ description: 'A comment: at most 280 characters, by an author of at most 60.' })], CommentInput);
field(CommentInput, 'workshopId', () => ID);
field(CommentInput, 'author', () => String);
field(CommentInput, 'text', () => String);
Reflect.decorate([IsNotEmpty(), MaxLength(60)], CommentInput.prototype, 'author');
Reflect.decorate([IsNotEmpty(), MaxLength(280)], CommentInput.prototype, 'text');

class EditCommentInput {}
Reflect.decorate([InputType({ description: 'New text for a comment: at most 280 characters.' })], EditCommentInput);
field(EditCommentInput, 'commentId', () => ID);
field(EditCommentInput, 'text', () => String);
Reflect.decorate([IsNotEmpty(), MaxLength(280)], EditCommentInput.prototype, 'text');

class CommentPayload {
  constructor(values) {
    Object.assign(this, values);
  }
}
Reflect.decorate([ObjectType()], CommentPayload);
field(CommentPayload, 'comment', () => Comment);
field(CommentPayload, 'edits', () => Int, { description: 'How many times the comment was edited.' });

class BookingInput {}
Reflect.decorate([InputType()], BookingInput);
field(BookingInput, 'workshopId', () => ID);
field(BookingInput, 'attendee', () => String);
Reflect.decorate([IsNotEmpty(), MaxLength(60)], BookingInput.prototype, 'attendee');

// -- data -----------------------------------------------------------------------------------------------

const sessions = [
  new Workshop({ id: 'w1', title: 'GraphQL for agents', startsAt: '09:30', seatsLeft: 1, capacity: 12, comments: [] }),
  new Workshop({ id: 'w2', title: 'Type-safe resolvers', startsAt: '11:00', seatsLeft: 5, capacity: 20, comments: [] }),
  new Talk({ id: 't1', title: 'Keynote: APIs that explain themselves', startsAt: '09:00', speaker: 'Grace' }),
];
const bookables = [
  new Room({ id: 'r1', name: 'Atlas', floor: 1, reservedBy: null }),
  new Room({ id: 'r2', name: 'Borealis', floor: 2, reservedBy: null }),
  new Kit({ id: 'k1', name: 'Soldering kit', available: 3 }),
];
const bookings = [];
let comments = 0;

function workshop(id) {
  const found = sessions.find(s => s.id === id);
  if (!(found instanceof Workshop)) throw new Error(`No workshop has id ${id}.`);
  return found;
}

function take(found, attendee) {
  if (found.seatsLeft < 1) throw new Error(`${found.title} is full.`);
  found.seatsLeft -= 1;
  const booking = new Booking({ id: `b${bookings.length + 1}`, attendee, workshop: found });
  bookings.push(booking);
  return booking;
}

// -- resolvers ----------------------------------------------------------------------------------------

class ConferenceResolver {
  sessions() {
    return sessions;
  }
  session(id) {
    return sessions.find(s => s.id === id) || null;
  }
  bookable(id) {
    return bookables.find(b => b.id === id) || null;
  }
  rooms() {
    return bookables.filter(b => b instanceof Room);
  }
  kits() {
    return bookables.filter(b => b instanceof Kit);
  }
  book(input) {
    const booking = take(workshop(input.workshopId), input.attendee);
    return new BookingPayload({ booking, message: `Booked ${booking.workshop.title} for ${input.attendee}.` });
  }
  bookMany(workshopIds, attendee) {
    return workshopIds.map(id => take(workshop(id), attendee).workshop);
  }
  reserveRoom(roomId, by) {
    const room = bookables.find(b => b.id === roomId && b instanceof Room);
    if (!room) throw new Error(`No room has id ${roomId}.`);
    room.reservedBy = by;
    return new ReservationPayload({ room, message: `${room.name} reserved for ${by}.` });
  }
  editComment(input) {
    for (const found of sessions) {
      const comment = (found.comments || []).find(c => c.id === input.commentId);
      if (comment) {
        comment.text = input.text;
        comment.edits = (comment.edits || 0) + 1;
        return new CommentPayload({ comment, edits: comment.edits });
      }
    }
    throw new Error(`No comment has id ${input.commentId}.`);
  }
  addComment(input) {
    const comment = new Comment({ id: `c${++comments}`, author: input.author, text: input.text });
    workshop(input.workshopId).comments.push(comment);
    return comment;
  }
}
Reflect.decorate([Resolver()], ConferenceResolver);
method(ConferenceResolver, 'sessions', Query(() => [Session], { description: 'The programme.' }), []);
method(ConferenceResolver, 'session', Query(() => Session, { nullable: true, description: 'A workshop or talk by id.' }), [Arg('id', () => ID)]);
method(ConferenceResolver, 'bookable', Query(() => Bookable, { nullable: true, description: 'A room or kit by id.' }), [
  Arg('id', () => ID),
]);
method(ConferenceResolver, 'rooms', Query(() => [Room]), []);
method(ConferenceResolver, 'kits', Query(() => [Kit]), []);
method(ConferenceResolver, 'book', Mutation(() => BookingPayload, { description: 'Book a seat on a workshop.' }), [
  Arg('input', () => BookingInput),
]);
method(ConferenceResolver, 'bookMany', Mutation(() => [Workshop], { description: 'Book a seat on each workshop.' }), [
  Arg('workshopIds', () => [ID]),
  Arg('attendee', () => String),
]);
method(ConferenceResolver, 'reserveRoom', Mutation(() => ReservationPayload, { description: 'Reserve a room.' }), [
  Arg('roomId', () => ID),
  Arg('by', () => String),
]);
method(ConferenceResolver, 'editComment', Mutation(() => CommentPayload, { description: 'Change the text of a comment.' }), [
  Arg('input', () => EditCommentInput),
]);
method(ConferenceResolver, 'addComment', Mutation(() => Comment, { description: 'Comment on a workshop.' }), [
  Arg('input', () => CommentInput),
]);

buildSchema({ resolvers: [ConferenceResolver], validate: true })
  .then(schema => {
    const yoga = createYoga({ schema, graphqlEndpoint: '/graphql', landingPage: false, logging: false, maskedErrors: false });
    http.createServer(yoga).listen(port, '127.0.0.1', () => {
      const version = JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules/type-graphql/package.json'), 'utf8')).version;
      console.log(`workshops (type-graphql ${version}) listening on http://127.0.0.1:${port}/graphql`);
    });
  })
  .catch(error => {
    console.error(error);
    process.exit(1);
  });
