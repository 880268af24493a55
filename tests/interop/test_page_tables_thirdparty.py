"""What a model sees of a page, on servers someone else wrote: graphql-ruby (tests/rb/conference.rb),
graphene-django (tests/pyservers/jobs_django.py), TypeGraphQL (tests/js/workshops.js) and Pothos on
Apollo Server (tests/js/orders.js).

- a page is a table: columns named once, rows keyed by ID, a value the same on every row said once,
  each type of a mixed page with its own columns; what is left out is chosen by the schema and the
  values (URLs, opaque ids, foreign keys, long texts beside a title), never by a list of names;
- the objects a row names come as handles with their names on the same page, and `fields` reads more
  of each object (nested paths minting what they reach), checked before anything is sent; a field the
  model read once stays a column of its type;
- an object without identity never answers a value from before a write;
- a connection's facets and aggregates, and a page type's items, come with the page;
- `fields` as GraphQL writes it: through a page's items (`films.title`, `edges.node.title`), through
  lists and connections on the way (a bounded first page), and on each step of a shell pipe;
- a call or a chain step that names its fields shows just those, beside the column naming each object.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from dagtools.calls._preview_pages import rows_of
from tests.command import dagtools
from tests.thirdparty import attempt, call_ok, conference_url, jobs_url, opened, recorded, start_node_server, swapi_url, workshops_url  # noqa: F401


@pytest.fixture
def conference(conference_url: str) -> str:  # noqa: F811
    httpx.post(conference_url.removesuffix("/graphql") + "/reset", timeout=10).raise_for_status()
    return conference_url


@pytest.fixture(scope="module")
def orders_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with start_node_server("orders.js", "@pothos/core", tmp_path_factory) as port:
        yield f"http://127.0.0.1:{port}/graphql"


def _table(value: dict[str, Any], key: str = "preview") -> dict[str, Any]:
    table = value[key]
    assert all(isinstance(row, list) for k, row in table.items() if "#" in k), table
    return table


async def test_a_talks_page_is_a_table_chosen_by_the_schema_and_the_values(conference: str, opened) -> None:  # noqa: F811
    session = await opened(conference)
    page = await call_ok(session, "Query_talks", first=6)
    table = _table(page)
    header = table["Talk"]
    columns = header["columns"]
    assert {"title", "rating", "startsAt", "track", "durationMinutes"} <= set(columns)  # cheap values stay
    assert not {"slidesUrl", "speakerId", "abstract", "id"} & set(columns)  # a URL, a foreign key, a long text, an opaque id
    assert "conferenceId" not in columns  # the same on every row: said once, or left out as opaque
    for field in ("slidesUrl", "speakerId", "abstract"):
        assert field in page["note"]
    # a row is one value per column, and reads back as the talk's fields
    rows = rows_of(table)
    assert [rows[i]["title"] for i in page["result"]] == [row[columns.index("title")] for row in (table[i] for i in page["result"])]
    # columns are named once, not once per row
    text = json.dumps(page)
    assert text.count('"rating"') == 1 and text.count('"startsAt"') == 1
    # the speaker each talk names, as a handle with a name on the same page
    speakers = {rows[i].get("speakerBySpeakerId") for i in page["result"]} - {None}
    assert speakers and all(s.startswith("Speaker#") and rows_of(table)[s]["name"] for s in speakers)


async def test_a_mixed_feed_gives_each_type_its_own_columns(conference: str, opened) -> None:  # noqa: F811
    session = await opened(conference)
    feed = await call_ok(session, "Query_feed", first=6)
    table = _table(feed)
    assert "title" in table["Post"]["columns"] and "title" not in table["Comment"]["columns"]
    assert table["Comment"]["columns"][0] == "body"  # what a comment says leads where nothing else names it
    comments = [i for i in feed["result"] if i.startswith("Comment#")]
    assert comments and all(rows_of(table)[i]["body"] for i in comments)


async def test_fields_read_more_of_each_object_and_stay_columns(conference: str, recorded) -> None:  # noqa: F811
    session, executor = await recorded(conference)
    page = await call_ok(session, "Query_talks", first=3, fields=["abstract", "speakerBySpeakerId.company"])
    rows = rows_of(page["preview"])
    assert all(rows[i]["abstract"] for i in page["result"])  # asked for: shown, cut to a preview's length
    speaker = next(rows[i]["speakerBySpeakerId"] for i in page["result"] if rows[i].get("speakerBySpeakerId"))
    assert "company" in rows[speaker]
    # a mistake is answered before anything is sent, and changes nothing
    sent, held = len(executor.sent), len(session.registry)
    wrong = await attempt(session, "Query_talks", first=3, fields=["ratng"])
    assert wrong.is_error and "did you mean 'rating'" in wrong.value["error"]
    deep = await attempt(session, "Query_talks", first=3, fields=["speakerBySpeakerId.name.first"])
    assert deep.is_error and "is a value" in deep.value["error"]
    assert len(executor.sent) == sent and len(session.registry) == held
    # a field read once with its own tool stays a column of its type
    await call_ok(session, "Talk_slidesUrl", Talk=page["result"][0])
    later = await call_ok(session, "Query_talks", first=3)
    assert "slidesUrl" in later["preview"]["Talk"]["columns"]


async def test_a_connection_brings_its_facets_and_aggregates(conference: str, opened) -> None:  # noqa: F811
    session = await opened(conference)
    page = await call_ok(session, "Query_talks", first=2, track="DATA")
    assert page["totalCount"] >= 2 and isinstance(page["averageRating"], float)
    assert {f["track"] for f in page["facets"]} == {"WEB", "DATA", "OPS"} and all(f["count"] > 0 for f in page["facets"])


async def test_a_value_kept_from_before_a_write_is_never_answered_after_it(conference: str, recorded) -> None:  # noqa: F811
    session, executor = await recorded(conference, mutations=True)
    schedule = await call_ok(session, "Query_schedule")
    entry = schedule["result"][0]
    rows = rows_of(schedule["preview"])
    room = rows[entry]["room"]
    sent = len(executor.sent)
    assert (await call_ok(session, "ScheduleEntry_room", ScheduleEntry=entry))["result"] == room
    assert len(executor.sent) == sent  # read with the page: no request
    talk = await call_ok(session, "ScheduleEntry_talk", ScheduleEntry=entry)
    talk_id = httpx.post(conference, json={"query": "{ schedule { talk { id } } }"}, timeout=10).json()["data"]["schedule"][0]["talk"]["id"]
    rooms = {e["room"] for e in httpx.post(conference, json={"query": "{ schedule { room } }"}, timeout=10).json()["data"]["schedule"]}
    other = next(r for r in sorted(rooms) if r != room)
    moved = await attempt(session, "Mutation_moveTalk", talkId=talk_id, room=other)
    assert not moved.is_error, moved.value
    assert talk["result"]
    after = await attempt(session, "ScheduleEntry_room", ScheduleEntry=entry)
    assert len(executor.sent) > sent + 2  # asked the API again rather than answering from before the write
    if not after.is_error:  # the entry at that place is still the one found: its room as it is now
        assert (
            after.value["result"]
            == httpx.post(conference, json={"query": "{ schedule { room } }"}, timeout=10).json()["data"]["schedule"][0]["room"]
        )
    else:
        assert "ScheduleEntry" in after.value["error"]


async def test_a_job_board_page_names_each_company_and_keeps_its_numbers(jobs_url: str, opened) -> None:  # noqa: F811
    session = await opened(jobs_url)
    page = await call_ok(session, "Query_allJobs", first=5)
    table = _table(page)
    rows = rows_of(table)
    job_type = page["result"][0].split("#")[0]
    assert {"title", "openings"} <= set(table[job_type]["columns"]) | set(table[job_type].get("same", {}))
    companies = {rows[i]["company"] for i in page["result"]}
    assert all(c.startswith("Company#") and rows[c]["name"] for c in companies)
    assert page["lastPage"] is True and "more" not in page  # graphene's hasNextPage: no count says the page holds them all


async def test_a_booking_shows_the_seats_the_write_changed(workshops_url: str, opened) -> None:  # noqa: F811
    session = await opened(workshops_url, mutations=True)
    before = await call_ok(session, "Query_sessions")
    workshops = {i: r for i, r in rows_of(before["preview"]).items() if i.startswith("Workshop#")}
    assert all("seatsLeft" in r for r in workshops.values())  # a number users ask about stays a column
    booked = await attempt(session, "Mutation_book", input={"workshopId": "w2", "attendee": "Ada"})
    if booked.is_error:
        pytest.skip(f"the workshops app took other arguments: {booked.value}")
    assert "seatsLeft" in json.dumps(booked.value)


async def test_a_page_type_that_is_no_connection_shows_its_items(orders_url: str, opened) -> None:  # noqa: F811
    session = await opened(orders_url)
    page = await call_ok(session, "Query_orders", take=3)
    assert page["preview"]["total"] >= 3 and len(page["preview"]["items"]) == 3
    rows = rows_of(page["objects"])
    assert all(rows[i]["number"] for i in page["preview"]["items"])
    # a field of the items is read of each of them, written with the page's `items` or without
    for written in (["lines.quantity"], ["items.lines.quantity"]):
        read = await call_ok(session, "Query_orders", take=3, fields=written)
        rows = rows_of(read["objects"])
        lines = [line for i in read["preview"]["items"] for line in rows[i]["lines"]]
        assert lines and all(isinstance(rows[line]["quantity"], int) for line in lines)


async def test_a_reference_the_server_cannot_read_never_fails_the_page(swapi_url: str, recorded) -> None:  # noqa: F811
    """swapi-graphql answers a null homeworld with an error that carries no path: the page still comes,
    without the references, and says so."""
    session, executor = await recorded(swapi_url)
    page = await call_ok(session, "Query_allSpecies", first=4)
    rows = rows_of(page["preview"])
    assert [rows[i]["name"] for i in page["result"]] == ["Human", "Droid", "Wookie", "Rodian"]
    assert "homeworld" not in page["preview"]["Species"]["columns"] and "failed on the API" in page["note"]
    assert len(executor.sent) == 2  # the read with the references, then the one without


def _shell(url: str, line: str, tmp_path: Path) -> tuple[int, dict[str, Any], str]:
    """One `dagtools shell URL -c LINE`, in process: its exit code, what it printed as `key: JSON` lines, and stderr."""
    done = dagtools("shell", url, "-c", line, env={**os.environ, "DAGTOOLS_STATE_DIR": str(tmp_path / "state")})
    said = {}
    for printed in done.stdout.splitlines():
        key, _, value = printed.partition(": ")
        with contextlib.suppress(ValueError):
            said[key] = json.loads(value)
    return done.returncode, said, done.stderr


async def test_fields_written_through_a_pages_items_read_each_item(swapi_url: str, conference: str, recorded) -> None:  # noqa: F811
    """A model writes `films.title` or `edges.node.title` as it would in GraphQL: read of each item, as `title` is."""
    session, executor = await recorded(swapi_url)
    plain = await call_ok(session, "Query_allFilms", first=3, fields=["title", "director"])
    sent = executor.sent[-1]
    for written in (["films.title", "films.director"], ["edges.node.title", "director"]):  # SWAPI's list of items, and Relay's
        assert await call_ok(session, "Query_allFilms", first=3, fields=written) == plain
        assert executor.sent[-1] == sent
    assert [rows_of(plain["preview"])[i]["director"] for i in plain["result"]] == ["George Lucas", "Irvin Kershner", "Richard Marquand"]
    sent, held = len(executor.sent), len(session.registry)
    wrong = await attempt(session, "Query_allFilms", first=3, fields=["films.titel"])
    assert wrong.is_error and "Film has no field 'titel' (did you mean 'title'?)" in wrong.value["error"]
    assert len(executor.sent) == sent and len(session.registry) == held
    # graphql-ruby's connections have both `nodes` and `edges { node }`
    session, executor = await recorded(conference)
    page = await call_ok(session, "Query_talks", first=3, fields=["nodes.abstract", "edges.node.speakerBySpeakerId.company"])
    rows = rows_of(page["preview"])
    assert all(rows[i]["abstract"] for i in page["result"]) and any(rows[s].get("company") for s in rows if s.startswith("Speaker#"))
    assert len(executor.sent) == 1


async def test_fields_read_a_first_page_of_each_list_on_the_way(jobs_url: str, swapi_url: str, conference: str, recorded) -> None:  # noqa: F811
    """`companies { name jobs { title openings } }` is one call, not one call a company: a connection on the
    way is read a first page at a time (graphene-django, graphql-js), a plain list as it is (graphql-ruby)."""
    session, executor = await recorded(jobs_url)
    page = await call_ok(session, "Query_companies", fields=["name", "jobs.title", "jobs.openings"])
    assert len(executor.sent) == 1 and executor.sent[0][1] == {"nestedFirst": 10}
    raw = httpx.post(jobs_url, json={"query": "{ companies { name jobs { edges { node { title openings } } } } }"}, timeout=10).json()
    expected = {c["name"]: [(e["node"]["title"], e["node"]["openings"]) for e in c["jobs"]["edges"]] for c in raw["data"]["companies"]}
    rows = rows_of(page["preview"])
    assert {rows[c]["name"]: [(rows[j]["title"], rows[j]["openings"]) for j in rows[c]["jobs"]] for c in page["result"]} == expected
    # a page cut short says so, and which tool reads it whole on the handle; what it reached are handles like any other
    session, executor = await recorded(swapi_url)
    page = await call_ok(session, "Query_allFilms", first=2, fields=["characterConnection.name"])
    film = page["result"][0]
    assert f"{film}.characterConnection" in page["note"] and "Film_characterConnection" in page["note"]
    shown = [i for i in rows_of(page["preview"])[film]["characterConnection"] if i.startswith("Person#")]
    assert shown and all(rows_of(page["preview"])[i]["name"] for i in shown)
    whole = await call_ok(session, "Film_characterConnection", Film=film, first=20)
    assert whole["result"][: len(shown)] == shown
    session, executor = await recorded(conference)
    page = await call_ok(session, "Query_speakers", fields=["name", "talks.title"])
    raw = httpx.post(conference, json={"query": "{ speakers { name talks { title } } }"}, timeout=10).json()["data"]["speakers"]
    rows = rows_of(page["preview"])
    assert {rows[s]["name"]: [rows[t]["title"] for t in rows[s]["talks"]] for s in page["result"]} == {
        s["name"]: [t["title"] for t in s["talks"]][:10] for s in raw
    }


def test_a_shell_pipe_takes_fields_on_each_step(jobs_url: str, swapi_url: str, tmp_path: Path) -> None:  # noqa: F811
    """`Query_companies | Company_jobs fields=[...]` through `dagtools shell`, the chain `callChain` runs."""
    code, said, err = _shell(jobs_url, 'Query_companies | Company_jobs fields=["title","openings","company.name"]', tmp_path)
    assert code == 0, err
    rows = rows_of(said["preview"])
    jobs = [j for listed in said["result"].values() for j in listed]
    assert jobs and all(rows[j]["title"] and isinstance(rows[j]["openings"], int) for j in jobs)
    # a company on the way is named under objects, and gets no row that would only repeat it
    assert {said["objects"][rows[j]["company"]] for j in jobs} == set(said["objects"].values())
    assert not any(c.startswith("Company#") for c in rows)
    code, said, err = _shell(
        swapi_url, 'Query_allFilms first=2 fields=["director"] | Film_characterConnection first=3 fields=["homeworld.name"]', tmp_path
    )
    assert code == 0, err
    rows = rows_of(said["preview"])
    assert {rows[f]["director"] for f in said["result"]} == {"George Lucas", "Irvin Kershner"}
    people = [p for listed in said["result"].values() for p in listed]
    assert rows[rows[people[0]]["homeworld"]]["name"] == "Tatooine"  # Luke's
    code, said, err = _shell(swapi_url, 'Query_allFilms first=2 | Film_characterConnection fields=["homeworld.nme"]', tmp_path)
    assert code == 1 and "Step 2 of the chain" in err and "did you mean 'name'" in err and "Nothing was sent" in err


async def test_named_fields_are_all_a_page_shows_on_each_server(swapi_url: str, conference: str, jobs_url: str, opened) -> None:  # noqa: F811
    """ "On which planets were the pilots of starship 10 born?" reads as the GraphQL query would: planet names."""
    session = await opened(swapi_url)
    steps = [
        {"tool": "Query_starship", "arguments": {"starshipID": "10"}},
        {"tool": "Starship_pilotConnection"},
        {"tool": "Person_homeworld", "arguments": {"fields": ["name"]}},
    ]
    chained = await call_ok(session, "callChain", steps=steps)
    assert chained["preview"]["Planet"] == {"columns": ["name"]}
    assert chained["note"] == "Every list read on the way is whole."  # and nothing on what was left out
    assert sorted(r["name"] for r in rows_of(chained["preview"]).values()) == ["Corellia", "Kashyyyk", "Socorro", "Sullust"]
    # graphql-ruby: the talks' ratings, and not the speaker each talk names unasked
    session = await opened(conference)
    usual = await call_ok(session, "Query_talks", first=4)
    named = await call_ok(session, "Query_talks", first=4, fields=["rating"])
    talk = named["result"][0].split("#")[0]
    assert named["preview"][talk]["columns"] == ["title", "rating"] and len(usual["preview"][talk]["columns"]) > 2
    assert set(named["preview"]) == {talk, *named["result"]}
    # graphene-django: each job's openings and its company's name, the company a handle with that column
    session = await opened(jobs_url)
    named = await call_ok(session, "Query_allJobs", first=5, fields=["openings", "company.name"])
    job = named["result"][0].split("#")[0]
    columns = named["preview"][job]["columns"]
    assert columns[0] == "title" and sorted(columns[1:]) == ["company", "openings"]
    rows = rows_of(named["preview"])
    assert all(rows[rows[j]["company"]]["name"] for j in named["result"])
    assert {k for k in named["preview"] if "#" not in k} == {job, "Company"} and named["preview"]["Company"]["columns"] == ["name"]


async def test_a_lookup_of_several_ids_reads_each_in_one_call(jobs_url: str, opened) -> None:  # noqa: F811
    """graphene's `employer(id:)` is the only way to an agency: a list of ids reads each, a company, an
    agency, nothing, and the server's own refusal of one id, which leaves the others standing."""
    session = await opened(jobs_url)
    found = await call_ok(session, "Query_employer", id=["1", "100", "7", "a1"])
    assert found["result"]["1"].startswith("Company#") and found["result"]["100"].startswith("Agency#")
    assert "7" not in found["result"] and "nothing at id 7." in found["note"]
    assert found["result"]["a1"].startswith("error: ") and "a1" in found["result"]["a1"]
    assert found["preview"][found["result"]["100"]]["feePercent"] == 15
    probed = await call_ok(session, "Query_employer", id=[str(n) for n in range(1, 151)])  # more than one request holds
    assert sorted(probed["result"]) == ["1", "100", "2"] and "nothing at id 3-99, 101-150." in probed["note"]
    assert "None is an Agency" not in probed["note"]
    companies = await call_ok(session, "Query_employer", id=["1", "2", "3"])  # no agency: other ids are the only way to one
    assert companies["note"].endswith("None is an Agency: no tool lists Agency objects or their ids; look up other ids to find them.")


def test_the_map_names_the_lookup_of_what_no_tool_lists(
    jobs_url: str, orders_url: str, swapi_url: str, conference: str, tmp_path: Path
) -> None:  # noqa: F811
    """graphene's agencies and Pothos's products are read only by a root lookup: the shell's map says so on
    their line (an agent otherwise searches for the list that is not there); on SWAPI and the conference
    every type is listed somewhere, and no line says it."""
    marked = {}
    for url in (jobs_url, orders_url, swapi_url, conference):
        done = dagtools("shell", url, "-c", "map", env={**os.environ, "DAGTOOLS_STATE_DIR": str(tmp_path / "state")})
        assert done.returncode == 0, done.stderr
        marked[url] = [line for line in done.stdout.splitlines() if "no tool lists" in line]
    assert [m.split(":")[0] for m in marked[jobs_url]] == ["Agency"]
    assert marked[jobs_url][0].endswith("(no tool lists these; only Query_employer reads them: id=[A, B] reads several)")
    # an order line gives its product too, so the lookup is not the only way to one
    assert [m.split(":")[0] for m in marked[orders_url]] == ["Product"]
    assert marked[orders_url][0].endswith("(no tool lists these: Query_product id=[A, B] reads several)")
    assert marked[swapi_url] == marked[conference] == []
    code, said, err = _shell(orders_url, 'Query_product id=["p1", "p2", "nope"]', tmp_path)  # the line it names runs
    assert code == 0, err
    assert sorted(said["result"]) == ["p1", "p2"] and {said["preview"][h]["name"] for h in said["result"].values()} == {
        "Oat milk",
        "Rye bread",
    }


def test_the_console_script_twice_at_once_on_one_cache_maps_and_looks_up_agencies(jobs_url: str, tmp_path: Path) -> None:  # noqa: F811
    """`dagtools shell` as a terminal agent launches it, two commands at once on one cache and state
    folder: the map names the only lookup of agencies, and a lookup of 120 ids finds the one agency."""
    import subprocess
    import sys

    script = str(Path(sys.executable).with_name("dagtools"))
    env = {**os.environ, "DAGTOOLS_STATE_DIR": str(tmp_path / "state"), "DAGTOOLS_CACHE_DIR": str(tmp_path / "cache")}
    ids = json.dumps([str(n) for n in range(1, 121)])
    lines = {"map": "map", "probe": f"Query_employer id={ids} fields=[name, feePercent]"}
    running = {
        name: subprocess.Popen(
            [script, "shell", jobs_url, "--session", name, "-c", line], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for name, line in lines.items()
    }
    done = {name: process.communicate(timeout=120) for name, process in running.items()}
    assert [running[n].returncode for n in lines] == [0, 0], done
    assert "Agency: id: ID, name, hiring: Boolean, feePercent: Int (no tool lists these; only Query_employer reads them" in done["map"][0]
    probe = dict(line.split(": ", 1) for line in done["probe"][0].splitlines())
    assert sorted(json.loads(probe["result"])) == ["1", "100", "2"]
    assert probe["note"].startswith("null: nothing at id 3-99, 101-120.") and "None is an Agency" not in probe["note"]
