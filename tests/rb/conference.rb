# A conference's programme on graphql-ruby (class-based schema, the interpreter runtime), served by
# WEBrick on 127.0.0.1:PORT/graphql.
#
#   ruby conference.rb PORT
#
# Shapes: `talks(first:, after:, track:)` is a Relay connection whose `TalkConnection` also answers
# what lies beyond its page (`totalCount`, `averageRating`, `facets` counting talks by track);
# `Talk`, `Speaker`, `Workshop`, `Post` and `Comment` implement `Node` (graphql-ruby's opaque global
# IDs, Base64 of `Type-key`); a talk names its speaker twice, by a foreign key (`speakerId`) and by the
# field that reads it (`speakerBySpeakerId`, the name PostGraphile-style APIs give it); `abstract` and
# `bio` are long text; `startsAt` is a `DateTime` scalar in ISO 8601 and `slidesUrl` a `URL` scalar;
# `Workshop.availability` and the programme's `schedule` entries are value objects with no id; `feed`
# mixes posts and comments behind the `FeedItem` interface (comments have no title).
# Writes answer payloads: `bookSeat` takes a seat (a user error when the workshop is full), `moveTalk`
# moves a talk's schedule entry to another room (a user error when the room is taken at that time).
# State lives in this process: POST /reset puts the data back as it started.
require "json"
require "time"
require "webrick"
require "graphql"

module Conference
  Talk = Struct.new(:id, :title, :abstract, :ratings, :starts_at, :duration_minutes, :track, :state, :slides_url,
                    :speaker_id, :conference_id, :published, keyword_init: true)
  Speaker = Struct.new(:id, :name, :company, :bio, keyword_init: true)
  Workshop = Struct.new(:id, :title, :capacity, :seats_left, :waitlist, :price_cents, :starts_at, keyword_init: true)
  Post = Struct.new(:id, :title, :body, :author, :created_at, keyword_init: true)
  Comment = Struct.new(:id, :body, :author, :created_at, keyword_init: true)
  Entry = Struct.new(:room, :starts_at, :ends_at, :talk_id, keyword_init: true)

  ROOMS = ["Hall A", "Hall B", "Studio 3"].freeze
  CONFERENCE_ID = GraphQL::Schema::UniqueWithinType.encode("Conference", "2026")

  def self.gid(type, key)
    GraphQL::Schema::UniqueWithinType.encode(type, key)
  end

  def self.at(text)
    Time.iso8601(text)
  end

  # The programme as it starts (and as POST /reset puts it back).
  def self.seed
    speakers = [
      Speaker.new(id: gid("Speaker", 1), name: "Amara Okafor", company: "Fernwood Analytics",
                  bio: "Amara leads the data platform team at Fernwood Analytics, where she moved a decade of " \
                       "nightly batch jobs onto streaming pipelines without a single missed invoice run. Before " \
                       "that she wrote query planners for a columnar database startup and taught evening classes " \
                       "on SQL for journalists. She writes about schema evolution, backfills and the social side " \
                       "of owning shared datasets, and keeps a garden of stubborn tomatoes in Lagos."),
      Speaker.new(id: gid("Speaker", 2), name: "Lukas Brandt", company: "Kiteline",
                  bio: "Lukas is a front-end engineer at Kiteline, a travel booking company whose checkout serves " \
                       "forty markets in twenty-two languages. He maintains the company's design system and its " \
                       "GraphQL gateway, and has opinions about cache invalidation that he shares at length. " \
                       "Outside work he restores old mechanical keyboards and organises the Leipzig web meetup, " \
                       "which has met every month since 2016, twice in a power cut."),
      Speaker.new(id: gid("Speaker", 3), name: "Priya Raman", company: "Northwind Cloud",
                  bio: "Priya is a site reliability engineer at Northwind Cloud, responsible for the control plane " \
                       "that schedules a few hundred thousand containers a day. She has run more incident reviews " \
                       "than she can count and believes most outages are written long before they happen, in " \
                       "defaults nobody revisited. She contributes to open-source load testing tools and speaks " \
                       "about capacity planning, error budgets and on-call rotations that people can live with."),
      Speaker.new(id: gid("Speaker", 4), name: "Tomás Herrera", company: nil,
                  bio: "Tomás is an independent consultant who helps small teams ship their first production " \
                       "machine learning features, and mostly ends up helping them label data. He previously " \
                       "worked on recommendation systems for a music streaming service in Barcelona. His talks " \
                       "are known for live demos that work, and for the one time a demo did not and he finished " \
                       "the talk on a whiteboard borrowed from the venue's kitchen."),
      Speaker.new(id: gid("Speaker", 5), name: "Mei Lin Zhou", company: "Harbor Systems",
                  bio: "Mei Lin is a principal engineer at Harbor Systems, which builds logistics software for " \
                       "ports and rail yards. She designed the event log that tracks every container move across " \
                       "eleven terminals and has since become an accidental expert in clocks, time zones and the " \
                       "many ways two computers can disagree about what happened first. She mentors new engineers " \
                       "through the company's apprenticeship programme."),
    ]
    talk_rows = [
      # key, title, track, state, starts, minutes, speaker, ratings, published, abstract
      [1, "Streaming Without Tears: Moving Batch Jobs to Kafka", "DATA", "SCHEDULED", "2026-06-10T09:30:00Z", 40, 1,
       [5, 4, 5, 4, 5, 5, 3], true,
       "Nightly batch jobs are comfortable until the business asks for numbers before lunch. This talk follows " \
       "a two-year migration of an invoicing pipeline from cron and SQL scripts to Kafka streams, including the " \
       "parts that went badly: duplicated events during a broker upgrade, a backfill that ran for nine days, and " \
       "the finance team's justified suspicion of anything called eventually consistent. You will leave with a " \
       "checklist for deciding which jobs deserve streaming and which should stay boring."],
      [2, "Design Systems at Forty Markets", "WEB", "SCHEDULED", "2026-06-10T09:30:00Z", 40, 2,
       [4, 4, 3, 4, 5], true,
       "A design system that serves one product is a component library; one that serves forty markets is a " \
       "negotiation. Kiteline's checkout must render right-to-left scripts, six currency formats and legal " \
       "notices that change monthly, all from one set of components. This session shows how tokens, visual " \
       "regression tests and a strict deprecation policy kept three teams shipping independently, and where " \
       "the approach broke down when a market needed a layout nobody had imagined."],
      [3, "Error Budgets People Actually Use", "OPS", "SCHEDULED", "2026-06-10T11:00:00Z", 40, 3,
       [5, 5, 4, 5, 5, 4, 5, 5], true,
       "Most teams adopt error budgets, draw a dashboard and then ignore it until an outage. This talk describes " \
       "how Northwind Cloud's control plane team tied its budget to concrete decisions: when to freeze " \
       "deployments, when to spend a sprint on reliability work, and when to deliberately take risks because " \
       "the budget was untouched. Expect real graphs from eighteen months of operation, two arguments with " \
       "product managers that ended well, and one that did not, with what we would do differently."],
      [4, "Labelling Data Is the Product", "DATA", "SCHEDULED", "2026-06-10T11:00:00Z", 25, 4,
       [3, 4, 2, 4], true,
       "Small teams shipping their first model usually spend their time on architecture choices that barely " \
       "matter and ignore the labels that decide everything. Drawing on a dozen consulting engagements, this " \
       "talk shows how to write a labelling guide, measure agreement between annotators, and find the " \
       "mislabelled examples that quietly cap accuracy. It closes with a live demo that retrains a classifier " \
       "after fixing forty labels and compares the results with a week spent tuning hyperparameters instead."],
      [5, "Clocks Lie: Ordering Events Across Eleven Terminals", "DATA", "SCHEDULED", "2026-06-10T14:00:00Z", 50, 5,
       [5, 4, 5, 5, 4, 4], true,
       "When a crane in one terminal and a gate scanner in another both report a container, which event came " \
       "first? Harbor Systems learned the hard way that wall clocks drift, time zones shift under daylight " \
       "saving rules, and network partitions reorder everything. This talk walks through the design of an " \
       "event log using hybrid logical clocks, the audits that convinced customs authorities to trust it, and " \
       "the bugs found by replaying a year of traffic with clocks deliberately skewed by several minutes."],
      [6, "Caching GraphQL at the Edge", "WEB", "SCHEDULED", "2026-06-10T14:00:00Z", 40, 2,
       [3, 3, 4, 2, 3], true,
       "GraphQL's single endpoint makes HTTP caching look impossible, and many teams give up and cache nothing. " \
       "Kiteline's gateway now serves most search traffic from the edge using persisted queries, per-field cache " \
       "hints and a purge pipeline driven by change events from the inventory service. This talk explains " \
       "the trade-offs of each layer, shows hit ratios before and after, and describes the stale-price incident " \
       "that taught the team why cache keys must include the customer's market and currency."],
      [7, "Capacity Planning for Humans", "OPS", "SCHEDULED", "2026-06-10T15:30:00Z", 25, 3,
       [4, 5, 4], true,
       "Capacity planning spreadsheets tend to be owned by one person, trusted by nobody and updated the day " \
       "after an outage. This short talk proposes a lighter process: a quarterly review of three numbers per " \
       "service, load tests that run in the normal deployment pipeline, and a written forecast that product " \
       "teams sign off on. It includes templates, the load test harness we open-sourced, and a frank account " \
       "of the quarter in which the forecast was off by a factor of three and what that cost us."],
      [8, "Accessible Forms From the Ground Up", "WEB", "SCHEDULED", "2026-06-11T09:30:00Z", 50, nil,
       [], true,
       "Forms are where most web applications fail their users, and accessibility audits often arrive after " \
       "the design is fixed. This workshop-style talk rebuilds a multi-step booking form with native elements, " \
       "clear error summaries, sensible focus handling and labels that screen readers announce correctly. Each " \
       "step is tested with a screen reader and keyboard only, and we measure completion rates from a real A/B " \
       "test in which the accessible version also converted better for everyone. Speaker to be announced."],
      [9, "Backfills Are Migrations Too", "DATA", "DRAFT", "2026-06-11T11:00:00Z", 25, 1,
       [], false,
       "Schema migrations get code review, staged rollouts and rollback plans; backfills get a script run from " \
       "a laptop on Friday afternoon. This draft talk argues that every backfill deserves the same discipline " \
       "as a migration and shows the tooling Fernwood built to get there: idempotent batches, progress stored " \
       "in the warehouse itself, rate limits tied to replica lag, and a dry-run mode that estimates cost before " \
       "anything is written. Several war stories are still being cleared with the legal department."],
      [10, "Incident Reviews Without Blame or Theatre", "OPS", "CANCELLED", "2026-06-11T11:00:00Z", 40, 3,
       [], false,
       "Blameless incident reviews are widely praised and rarely practised well: many turn into theatre where " \
       "everyone agrees nothing could have been done. This talk presents a format used for over two hundred " \
       "reviews, with a timeline written before the meeting, a facilitator from another team, and follow-up " \
       "actions limited to three with named owners and dates. It also covers how to review incidents caused by " \
       "vendors, and how to share lessons across an organisation without publishing embarrassing details."],
      [11, "Recommendations on a Shoestring", "DATA", "SCHEDULED", "2026-06-11T14:00:00Z", 40, 4,
       [4, 3, 4, 4, 5, 3], true,
       "You do not need a feature store, a vector database and a team of ten to recommend things people want. " \
       "This talk builds a recommender for a small online bookshop using co-occurrence counts, a popularity " \
       "baseline and a weekly batch job, then measures it honestly against the baseline with an offline " \
       "evaluation and a two-week online test. We discuss when the simple approach stops being enough, the " \
       "signals that tell you so, and the cheapest next step that does not require rewriting everything."],
      [12, "Progressive Enhancement in 2026", "WEB", "SCHEDULED", "2026-06-11T15:30:00Z", 25, 5,
       [5, 4, 4, 5], true,
       "Server-rendered HTML, small islands of JavaScript and forms that work before scripts load are back in " \
       "fashion, and for good reasons. Using Harbor Systems' terminal operator console as a case study, this " \
       "talk shows how a team rebuilt a heavy single-page application into pages that load on rugged tablets " \
       "with poor connections. We compare performance budgets before and after, discuss the features that " \
       "still needed client-side state, and the testing strategy that keeps both paths working."],
      [13, "Chaos Days on a Budget", "OPS", "DRAFT", "2026-06-11T16:15:00Z", 90, nil,
       [], false,
       "Chaos engineering is often presented as a platform with dashboards and automated experiments, which " \
       "puts it out of reach of most teams. This draft session describes chaos days instead: a planned day " \
       "in which a team breaks its own staging environment on purpose, following written hypotheses and " \
       "stopping rules. It covers how to pick the first experiments, how to involve support and product staff, " \
       "and how to turn the findings into fixes rather than a slide deck that nobody reads afterwards."],
    ]
    talks = talk_rows.map do |key, title, track, state, starts, minutes, speaker, ratings, published, abstract|
      Talk.new(id: gid("Talk", key), title: title, abstract: abstract, ratings: ratings, starts_at: at(starts),
               duration_minutes: minutes, track: track, state: state,
               slides_url: published ? "https://slides.example.org/2026/#{key}-#{title.downcase.gsub(/[^a-z0-9]+/, '-').sub(/-$/, '')}" : nil,
               speaker_id: speaker && gid("Speaker", speaker), conference_id: CONFERENCE_ID, published: published)
    end
    rooms = { 1 => "Hall A", 2 => "Hall B", 3 => "Hall A", 4 => "Studio 3", 5 => "Hall A", 6 => "Hall B",
              7 => "Studio 3", 8 => "Hall A", 11 => "Hall B", 12 => "Studio 3" }
    schedule = rooms.map do |key, room|
      talk = talks[key - 1]
      Entry.new(room: room, starts_at: talk.starts_at, ends_at: talk.starts_at + talk.duration_minutes * 60,
                talk_id: talk.id)
    end
    workshops = [
      Workshop.new(id: gid("Workshop", 1), title: "Hands-on Kafka Streams", capacity: 24, seats_left: 7, waitlist: 0,
                   price_cents: 34_900, starts_at: at("2026-06-09T09:00:00Z")),
      Workshop.new(id: gid("Workshop", 2), title: "Screen Readers for Web Developers", capacity: 16, seats_left: 0,
                   waitlist: 5, price_cents: 19_900, starts_at: at("2026-06-09T13:30:00Z")),
      Workshop.new(id: gid("Workshop", 3), title: "Load Testing in the Pipeline", capacity: 20, seats_left: 1,
                   waitlist: 0, price_cents: 27_500, starts_at: at("2026-06-12T09:00:00Z")),
      Workshop.new(id: gid("Workshop", 4), title: "Labelling Sprint: From Guide to Model", capacity: 30, seats_left: 30,
                   waitlist: 0, price_cents: 0, starts_at: at("2026-06-12T13:00:00Z")),
    ]
    feed = [
      Post.new(id: gid("Post", 1), title: "Programme announced", author: "Programme committee",
               created_at: at("2026-03-02T10:00:00Z"),
               body: "Thirteen talks across three tracks, four workshops and a day of hallway track. Thank you to " \
                     "everyone who sent a proposal: we received 214 this year."),
      Comment.new(id: gid("Comment", 1), author: "Jonas Weber", created_at: at("2026-03-02T11:42:10Z"),
                  body: "Will the workshops be recorded? I can only attend the second day."),
      Comment.new(id: gid("Comment", 2), author: "Programme committee", created_at: at("2026-03-02T13:05:00Z"),
                  body: "The talks will be; the workshops will not, but their material will be published."),
      Post.new(id: gid("Post", 2), title: "Early-bird tickets end Friday", author: "Organisers",
               created_at: at("2026-04-10T08:30:00Z"),
               body: "The early-bird price holds until Friday at midnight UTC. Group discounts apply from five seats."),
      Comment.new(id: gid("Comment", 3), author: "Sofia Marchetti", created_at: at("2026-04-10T09:14:55Z"),
                  body: "Is the student discount still available after the early-bird period?"),
      Post.new(id: gid("Post", 3), title: "Screen reader workshop is full", author: "Organisers",
               created_at: at("2026-05-01T16:00:00Z"),
               body: "All sixteen seats are taken. Join the waitlist: seats freed by cancellations go in order."),
      Comment.new(id: gid("Comment", 4), author: "Ravi Shah", created_at: at("2026-05-01T16:20:31Z"),
                  body: "Added myself to the waitlist. Any chance of a second session in the afternoon?"),
      Post.new(id: gid("Post", 4), title: "Venue and travel guide", author: "Organisers",
               created_at: at("2026-05-20T07:45:00Z"),
               body: "The venue is ten minutes on foot from the central station. Step-free access is at the east " \
                     "entrance; quiet rooms are on the second floor."),
    ].sort_by(&:created_at).reverse
    { talks: talks, speakers: speakers, workshops: workshops, feed: feed, schedule: schedule }
  end

  class << self
    attr_accessor :db
  end
  self.db = seed

  def self.find(id)
    db.values_at(:talks, :speakers, :workshops, :feed).flatten.find { |row| row.id == id }
  end

  def self.rating(talks)
    ratings = talks.flat_map(&:ratings)
    ratings.empty? ? nil : (ratings.sum.to_f / ratings.size).round(2)
  end

  # -- types ----------------------------------------------------------------------------------------

  class DateTimeScalar < GraphQL::Schema::Scalar
    graphql_name "DateTime"
    description "An instant in ISO 8601, in UTC (2026-06-10T09:30:00Z)."
    specified_by_url "https://scalars.graphql.org/andimarek/date-time"

    def self.coerce_input(value, _context)
      Time.iso8601(value.to_s)
    rescue ArgumentError
      raise GraphQL::CoercionError, "#{value.inspect} is not an ISO 8601 date-time (2026-06-10T09:30:00Z)"
    end

    def self.coerce_result(value, _context)
      value.utc.iso8601
    end
  end

  class UrlScalar < GraphQL::Schema::Scalar
    graphql_name "URL"
    description "An absolute http or https URL."

    def self.coerce_input(value, _context)
      uri = URI.parse(value.to_s)
      raise URI::InvalidURIError unless %w[http https].include?(uri.scheme)

      value.to_s
    rescue URI::InvalidURIError
      raise GraphQL::CoercionError, "#{value.inspect} is not an absolute http(s) URL"
    end

    def self.coerce_result(value, _context)
      value.to_s
    end
  end

  class TrackEnum < GraphQL::Schema::Enum
    graphql_name "Track"
    value "WEB", "Browsers, front ends and the HTTP between."
    value "DATA", "Pipelines, storage and models."
    value "OPS", "Running systems in production."
  end

  class TalkStateEnum < GraphQL::Schema::Enum
    graphql_name "TalkState"
    value "DRAFT", "Accepted, not yet on the programme."
    value "SCHEDULED", "On the programme."
    value "CANCELLED", "Withdrawn after it was scheduled."
  end

  class BaseObject < GraphQL::Schema::Object
  end

  module FeedItemInterface
    include GraphQL::Schema::Interface
    graphql_name "FeedItem"
    description "A post or comment on the conference's news feed."
    field :id, ID, null: false
    field :created_at, DateTimeScalar, null: false
  end

  class SpeakerType < BaseObject
    graphql_name "Speaker"
    implements GraphQL::Types::Relay::Node
    field :name, String, null: false
    field :company, String, null: true, description: "Null for independent speakers."
    field :bio, String, null: false
    field :talks, ["Conference::TalkType"], null: false

    def talks
      Conference.db[:talks].select { |talk| talk.speaker_id == object.id }
    end
  end

  class TalkType < BaseObject
    graphql_name "Talk"
    implements GraphQL::Types::Relay::Node
    field :title, String, null: false
    field :abstract, String, null: false
    field :rating, Float, null: true, description: "The average of the audience's ratings (1 to 5); null before any."
    field :starts_at, DateTimeScalar, null: false
    field :duration_minutes, Int, null: false
    field :track, TrackEnum, null: false
    field :state, TalkStateEnum, null: false
    field :slides_url, UrlScalar, null: true
    field :speaker_id, ID, null: true, description: "The speaker's id; null while the speaker is to be announced."
    field :speaker_by_speaker_id, SpeakerType, null: true, description: "Reads the speaker `speakerId` names."
    field :conference_id, ID, null: false
    field :published, Boolean, null: false

    def rating
      Conference.rating([object])
    end

    def speaker_by_speaker_id
      object.speaker_id && Conference.db[:speakers].find { |speaker| speaker.id == object.speaker_id }
    end
  end

  class AvailabilityType < BaseObject
    graphql_name "Availability"
    description "Seats left and people waiting for one, at the time of asking."
    field :seats_left, Int, null: false
    field :waitlist, Int, null: false
  end

  class WorkshopType < BaseObject
    graphql_name "Workshop"
    implements GraphQL::Types::Relay::Node
    field :title, String, null: false
    field :seats_left, Int, null: false
    field :capacity, Int, null: false
    field :price_cents, Int, null: false
    field :starts_at, DateTimeScalar, null: false
    field :availability, AvailabilityType, null: false

    def availability
      object
    end
  end

  class PostType < BaseObject
    graphql_name "Post"
    implements GraphQL::Types::Relay::Node
    implements FeedItemInterface
    field :title, String, null: false
    field :body, String, null: false
    field :author, String, null: false
  end

  class CommentType < BaseObject
    graphql_name "Comment"
    implements GraphQL::Types::Relay::Node
    implements FeedItemInterface
    field :body, String, null: false
    field :author, String, null: false
  end

  class ScheduleEntryType < BaseObject
    graphql_name "ScheduleEntry"
    description "One talk's slot in a room."
    field :room, String, null: false
    field :starts_at, DateTimeScalar, null: false
    field :ends_at, DateTimeScalar, null: false
    field :talk, TalkType, null: false

    def talk
      Conference.db[:talks].find { |talk| talk.id == object.talk_id }
    end
  end

  class TrackFacetType < BaseObject
    graphql_name "TrackFacet"
    description "How many talks a track holds, whatever track the list is filtered to."
    field :track, TrackEnum, null: false
    field :count, Int, null: false
  end

  class TalkEdgeType < GraphQL::Types::Relay::BaseEdge
    graphql_name "TalkEdge"
    node_type TalkType
  end

  class TalkConnectionType < GraphQL::Types::Relay::BaseConnection
    graphql_name "TalkConnection"
    edge_type TalkEdgeType
    field :total_count, Int, null: false, description: "Talks in the list, over every page."
    field :average_rating, Float, null: true, description: "The average rating over every page."
    field :facets, [TrackFacetType], null: false

    def total_count
      object.items.size
    end

    def average_rating
      Conference.rating(object.items)
    end

    def facets
      TrackEnum.values.keys.map do |track|
        { track: track, count: Conference.db[:talks].count { |talk| talk.track == track } }
      end
    end
  end

  class UserErrorType < BaseObject
    graphql_name "UserError"
    description "A write refused: nothing was changed."
    field :message, String, null: false
    field :path, [String], null: false, description: "The argument at fault."
  end

  class BookSeat < GraphQL::Schema::Mutation
    graphql_name "BookSeat"
    description "Takes one seat in a workshop; refused when none is left."
    argument :workshop_id, ID
    field :workshop, WorkshopType, null: true
    field :errors, [UserErrorType], null: false

    def resolve(workshop_id:)
      workshop = Conference.db[:workshops].find { |row| row.id == workshop_id }
      if workshop.nil?
        return { workshop: nil, errors: [{ message: "No workshop has the id #{workshop_id}", path: ["workshopId"] }] }
      end
      if workshop.seats_left.zero?
        return { workshop: workshop, errors: [{ message: "#{workshop.title} is full, #{workshop.waitlist} on the waitlist",
                                                path: ["workshopId"] }] }
      end

      workshop.seats_left -= 1
      { workshop: workshop, errors: [] }
    end
  end

  class MoveTalk < GraphQL::Schema::Mutation
    graphql_name "MoveTalk"
    description "Moves a scheduled talk to another room at the same time; refused when that room is taken."
    argument :talk_id, ID
    argument :room, String, description: "One of: #{ROOMS.join(', ')}."
    field :entry, ScheduleEntryType, null: true
    field :errors, [UserErrorType], null: false

    def resolve(talk_id:, room:)
      entry = Conference.db[:schedule].find { |row| row.talk_id == talk_id }
      return failure("No scheduled talk has the id #{talk_id}", "talkId") if entry.nil?
      return failure("No room is named #{room.inspect}: use one of #{ROOMS.join(', ')}", "room") unless ROOMS.include?(room)

      taken = Conference.db[:schedule].find do |other|
        other != entry && other.room == room && other.starts_at < entry.ends_at && entry.starts_at < other.ends_at
      end
      return failure("#{room} is taken by another talk at that time", "room") if taken

      entry.room = room
      { entry: entry, errors: [] }
    end

    private

    def failure(message, argument)
      { entry: nil, errors: [{ message: message, path: [argument] }] }
    end
  end

  class QueryType < BaseObject
    graphql_name "Query"
    include GraphQL::Types::Relay::HasNodeField

    field :talks, TalkConnectionType, null: false, connection: true do
      argument :track, TrackEnum, required: false
    end
    field :talk, TalkType, null: true do
      argument :id, ID
    end
    field :speaker, SpeakerType, null: true do
      argument :id, ID
    end
    field :speakers, [SpeakerType], null: false
    field :workshop, WorkshopType, null: true do
      argument :id, ID
    end
    field :workshops, [WorkshopType], null: false
    field :feed, [FeedItemInterface], null: false do
      argument :first, Int, required: false, default_value: 8
    end
    field :schedule, [ScheduleEntryType], null: false, description: "Every scheduled slot, by time then room."

    def talks(track: nil)
      Conference.db[:talks].select { |talk| track.nil? || talk.track == track }
    end

    def talk(id:)
      Conference.db[:talks].find { |row| row.id == id }
    end

    def speaker(id:)
      Conference.db[:speakers].find { |row| row.id == id }
    end

    def speakers
      Conference.db[:speakers]
    end

    def workshop(id:)
      Conference.db[:workshops].find { |row| row.id == id }
    end

    def workshops
      Conference.db[:workshops]
    end

    def feed(first:)
      Conference.db[:feed].first([first, 0].max)
    end

    def schedule
      Conference.db[:schedule].sort_by { |entry| [entry.starts_at, entry.room] }
    end
  end

  class MutationType < BaseObject
    graphql_name "Mutation"
    field :book_seat, mutation: BookSeat
    field :move_talk, mutation: MoveTalk
  end

  TYPES = { Talk => TalkType, Speaker => SpeakerType, Workshop => WorkshopType, Post => PostType,
            Comment => CommentType }.freeze

  class Schema < GraphQL::Schema
    query QueryType
    mutation MutationType
    orphan_types PostType, CommentType
    default_max_page_size 50

    def self.resolve_type(_abstract, object, _context)
      TYPES.fetch(object.class)
    end

    def self.object_from_id(id, _context)
      Conference.find(id)
    end

    def self.id_from_object(object, _type, _context)
      object.id
    end
  end
end

port = Integer(ARGV.fetch(0) { abort "usage: ruby conference.rb PORT" })
lock = Mutex.new
server = WEBrick::HTTPServer.new(BindAddress: "127.0.0.1", Port: port, AccessLog: [],
                                 Logger: WEBrick::Log.new($stderr, WEBrick::Log::WARN))

json = lambda do |response, status, body|
  response.status = status
  response["Content-Type"] = "application/json; charset=utf-8"
  response.body = JSON.generate(body)
end

server.mount_proc("/graphql") do |request, response|
  next json.call(response, 405, { errors: [{ message: "POST a JSON body to /graphql" }] }) unless request.request_method == "POST"

  begin
    payload = JSON.parse(request.body || "")
    raise JSON::ParserError, "the body is not a JSON object" unless payload.is_a?(Hash)
  rescue JSON::ParserError => error
    next json.call(response, 400, { errors: [{ message: "The body is not JSON: #{error.message}" }] })
  end
  variables = payload["variables"]
  variables = JSON.parse(variables) if variables.is_a?(String) && !variables.empty?
  result = lock.synchronize do
    Conference::Schema.execute(payload["query"], variables: variables || {},
                                                 operation_name: payload["operationName"])
  end
  json.call(response, 200, result.to_h)
end

server.mount_proc("/reset") do |request, response|
  next json.call(response, 405, { errors: [{ message: "POST to /reset" }] }) unless request.request_method == "POST"

  lock.synchronize { Conference.db = Conference.seed }
  json.call(response, 200, { reset: true })
end

%w[TERM INT].each { |signal| trap(signal) { server.shutdown } }
server.start
