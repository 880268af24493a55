"""Shared fixtures: the kitchen example API and the public schemas in ../shared/schemas; the markers.

`pytest` runs everything. `pytest -m "not e2e and not slow" -n 2` is the fast subset for the edit-test
loop, on two workers: every module of dagtools/ still runs in it, in the run's own processes
(tests/coverage_report.py checks it from the coverage data). The markers are set below from measured
durations (see `E2E` and `SLOW`), so a new test module runs in the fast subset until it is marked.
tests/ is laid out like dagtools/ (tests/calls/ for dagtools/calls/, ...); tests/interop/ holds the
tests on servers someone else wrote.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.thirdparty import conference_url, github_url, media_closed_url, media_old_url, media_url, opened, recorded, swapi_url  # noqa: E402,F401  (servers on loopback, for any module)

os.environ["DAGTOOLS_DEBUG"] = os.environ.get("DAGTOOLS_DEBUG", "1")  # every document shape dagtools builds is validated against its schema

#: The public schemas (GitHub, Linear, Shopify, Saleor, Dagger, SWAPI...): an optional input, read from
#: $DAGTOOLS_SCHEMAS (the variable bench/ reads too), else ../shared/schemas beside the checkout. Tests about
#: those APIs themselves are marked `public_schemas`; without the folder a run leaves them out and says so
#: in its header. Tests that only need a large schema use the forge that tests/big_schema.py writes.
SHARED_SCHEMAS = Path(os.environ.get("DAGTOOLS_SCHEMAS") or ROOT.parent / "shared" / "schemas")
HOW_TO_GET_SCHEMAS = (
    f"the public schemas are not in {SHARED_SCHEMAS}: set DAGTOOLS_SCHEMAS to a folder holding them "
    '(github.schema.graphql, linear.schema.graphql, ...: docs/development.md, "The public schemas", lists each file and '
    "where to get it), then run `pytest -m public_schemas`"
)
#: The generated stand-ins for a large public schema, by the names tests give them: SDL, and an
#: introspection answer with a problem a lenient load tolerates.
FORGE = "forge.graphql"
FORGE_JSON = "forge.introspection.json"


def shared_schema_path(name: str) -> Path:
    """Path of one public schema (or of the generated forge); skips the test, saying how to get them, where absent."""
    if name in (FORGE, FORGE_JSON):
        from tests.big_schema import forge_introspection_path, forge_path

        return forge_path() if name == FORGE else forge_introspection_path()
    path = SHARED_SCHEMAS / name
    if not path.exists():
        pytest.skip(HOW_TO_GET_SCHEMAS)
    return path


def shared_schema_names() -> list[str]:
    """The public schemas' file names, or the generated forge alone where they are absent: a test over
    every schema always has one to run on."""
    if not SHARED_SCHEMAS.is_dir():
        return [FORGE]
    return sorted(p.name for p in SHARED_SCHEMAS.iterdir() if p.suffix in {".graphql", ".graphqls", ".json"})


def _leave_out_public_schema_tests(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without the public schemas, tests about those APIs are left out (not skipped one by one), unless
    asked for by name with `-m public_schemas`, where each skips saying how to provide them."""
    if SHARED_SCHEMAS.is_dir() or "public_schemas" in (config.getoption("markexpr") or ""):
        return
    left = [item for item in items if item.get_closest_marker("public_schemas")]
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = [item for item in items if not item.get_closest_marker("public_schemas")]
        config.stash[_LEFT_OUT] = len(left)


_LEFT_OUT = pytest.StashKey[int]()


def pytest_report_collectionfinish(config: pytest.Config) -> str | None:
    left = config.stash.get(_LEFT_OUT, 0)
    return f"{left} tests about the public APIs left out: {HOW_TO_GET_SCHEMAS}" if left else None


_loaded: dict[str, object] = {}


def load_shared(name: str):
    """A public schema, loaded once per test run (the big ones take seconds to build)."""
    if name not in _loaded:
        from dagtools import load_schema

        _loaded[name] = load_schema(shared_schema_path(name))
    return _loaded[name]


_compiled: dict[tuple, object] = {}


def shared_catalogue(name: str, **options):
    """The catalogue of a public schema, compiled once per test run and options (its tools are built on
    first use and kept: every module that reads GitHub's tools shares the work)."""
    key = (name, *sorted(options.items()))
    if key not in _compiled:
        from dagtools import compile_catalogue

        _compiled[key] = compile_catalogue(load_shared(name).schema, **options)
    return _compiled[key]


@pytest.fixture
def kitchen_server(loopback):
    """The kitchen API served over real HTTP on loopback: `.url` and the `.requests` it received.

    Each test gets a path of its own on the run's one server (a fresh URL, so no schema cached by
    another test is found, and only its own requests recorded)."""
    from examples.kitchen.api import schema

    recorder = loopback.mount(schema)
    yield recorder
    loopback.unmount(recorder)


@pytest.fixture
def kitchen_url(kitchen_server) -> str:
    """URL of the kitchen API served over HTTP on loopback, e.g. http://127.0.0.1:PORT/graphql."""
    return kitchen_server.url


@pytest.fixture(scope="session")
def loopback():
    """One uvicorn server on 127.0.0.1 for the run; `transport` and `kitchen_server` mount schemas on it,
    each at a path of its own that is unmounted when its test ends, so no state crosses between tests."""
    from tests.transports import Loopback

    with Loopback.serve() as server:
        yield server


@pytest.fixture(params=["local", "http"])
async def transport(request):
    """Where a test's executors run: in process, or over real HTTP to the same schema instance on loopback."""
    from tests.transports import Transport

    chosen = Transport(request.param, request.getfixturevalue("loopback") if request.param == "http" else None)
    yield chosen
    await chosen.aclose()


# -- markers: which tests leave the fast subset ------------------------------------------------------------

#: Tests that start a process of their own (dagtools as a user runs it, a Python worker, node, npx, a
#: wheel built and installed), by module (its path under tests/) and test name (a `fnmatch` pattern; parametrized ids match too).
#: Each command of the command line keeps one such test (tests/cli/test_cli.py); the rest run in process.
#: The Redis store tests' redis-server starts in milliseconds, once per module: they stay in the subset.
E2E: dict[str, tuple[str, ...]] = {
    "test_docs.py": ("test_the_site_builds_strict", "test_a_broken_anchor_fails_the_strict_build"),
    "cli/test_cli_messages.py": ("test_a_port_in_use_is_said_with_a_hint_before_anything_starts",),
    "cli/test_interrupts.py": ("test_*_sigint*",),  # SIGINT sent to the console script (the in-process stops stay)
    "evals/test_eval.py": ("test_the_report_page_renders_in_a_browser", "test_min_success_exits_zero_at_or_above_it"),
    "integrations/test_integration_readme.py": ("test_the_example_runs_against_a_local_server*",),
    "integrations/test_integrations.py": ("test_finding_the_integrations_imports_no_framework",),
    "interop/test_json_graphql_server.py": ("*",),
    # A third-party server chosen by parameter (the fixture is looked up by name, so E2E_FIXTURES misses it).
    "calls/test_lean_documents.py": ("test_media_node_given_a_held_album_selects_the_album_fragment_only[[]media_*",),
    "models/test_llama_server.py": ("*",),
    "mcpserver/test_mcp.py": ("test_stdio_subprocess_*", "test_http_dynamic_fries*", "test_http_concurrent_clients_are_isolated*"),
    "mcpserver/test_mcp_clients.py": (
        "test_a_client_setup_starts_dagtools_that_lists_and_calls_tools*",
        "test_an_unset_token_stops_the_server_at_start*",
    ),
    "mcpserver/test_mcp_launched.py": ("*",),
    "mcpserver/test_mcp_interrupts.py": ("*",),
    "mcpserver/test_mcp_conformance.py": ("test_the_conformance_suite_passes_but_its_listed_failures*",),
    "mcpserver/test_mcp_security.py": ("*",),
    "mcpserver/test_mcp_oauth.py": ("test_*_down_*",),  # with an authorization server: E2E_FIXTURES
    "mcpserver/test_mcp_startup.py": (
        "test_stdio_start_says_what_it_serves_on_stderr_and_nothing_on_stdout",
        "test_start_*",
        "test_a_schema_file_warns_at_start_that_calls_cannot_run",
        "test_no_cache_and_refresh_schema_reach_the_schema_cache",
        "test_timeout_bounds_the_schema_fetch",
        "test_mcp_options_override_the_config_file",
    ),
    "mcpserver/test_mcp_store.py": (
        "test_restart_*",
        "test_without_a_store_a_restart_loses_the_session",
        "test_two_workers_*",
        "test_calls_racing_*",
        "test_a_store_that_cannot_be_written_stops_the_server_at_start",
        "test_a_store_that_fails_while_serving_says_which_and_what_to_do",
        "test_a_redis_server_that_goes_away_is_named_never_the_api",
    ),
    "mcpserver/test_mcp_url.py": ("*",),
    "mcpserver/test_mcp_workers.py": (
        "test_one_clients_calls_move_*",
        "test_a_worker_killed_*",
        "test_a_redis_primary_killed_*",
        "test_handshake_era_*",
    ),  # workers and HAProxy
    "mcpserver/test_mcp_odd_input.py": ("*",),
    "mcpserver/test_mcp_roaming.py": ("*",),
    "mcpserver/test_mcp_messages.py": ("*",),
    "mcpserver/test_mcp_listing.py": ("*",),
    "mcpserver/test_mcp_warm_url.py": ("*",),
    "test_packaging.py": ("*",),
    "test_readme.py": ("test_shell_block_runs*", "test_python_block_runs*"),
    "session/test_session_lifetime.py": ("test_no_open_sockets_under_dev_mode",),
    "cli/test_startup.py": ("*",),
    "cli/test_shell.py": ("*_across_processes*",),
    "shell/test_terminal.py": ("*",),  # a pseudo-terminal driving the shell as a process
    "stores/test_store.py": (
        "test_a_session_survives_its_process_being_killed*",
        "test_two_processes_racing_*",
        "test_a_killed_holders_lease_is_broken_within_a_second*",
        "test_a_killed_holder_not_yet_reaped_is_gone",
        "*[[]cluster]",  # six redis-server processes joined into a cluster, in seconds
    ),
    "stores/test_redis_cluster.py": (
        "test_sessions_spread_over_every_primary_*",
        "test_a_save_waits_for_its_replica_*",
        "test_a_primary_killed_under_load_*",
        "test_a_cluster_without_replicas_*",
        "test_slots_moved_between_primaries_*",
    ),
    # A fresh interpreter each: what is imported, and the OpenTelemetry SDK's process-wide providers.
    "test_telemetry.py": (
        "test_off_means_not_even_imported",
        "test_the_otel_variables_export_over_otlp_http",
        "test_variables_without_the_sdk_warn_once_and_the_run_goes_on*",
    ),
    "interop/test_thirdparty_servers.py": ("*media*",),
}
#: Fixtures that start a third-party server process: any test that uses one is e2e.
E2E_FIXTURES = frozenset(
    {
        "swapi_url",
        "media_url",
        "media_old_url",
        "media_closed_url",
        "json_graphql_server",
        "gateway",
        "github_url",
        "park_url",
        "workshops_url",
        "jobs_url",
        "conference_url",
        "warehouse",
        "orders",
        "orders_url",
    }
    | {"issuer", "other_issuer", "opaque_issuer"}
)
#: Tests that take seconds in this process: the big public schemas (GitHub, Linear, Saleor as SDL take
#: 1.5-2 s each to build), timeouts waited out on purpose, retries that back off.
#: Under "*", patterns for every module: a test parametrized with one of the big public schemas.
SLOW: dict[str, tuple[str, ...]] = {
    "*": tuple(f"*[[]*{name}*" for name in ("github.schema", "linear.schema", "saleor.schema", "shopify.", "dagger")),
    "agent/test_agent.py": ("test_cli_retries_and_turn_timeout",),
    "catalogue/test_catalogue.py": ("test_github_*",),
    "cli/test_cli.py": ("test_tools_prints_sizes_for_a_large_schema",),
    "executors/test_http.py": ("test_a_url_nothing_listens_on_fails_clearly", "test_429_waits_as_retry_after_asks"),
    "executors/test_http_bounds.py": ("test_a_trickling_server_cannot_hold_a_call_past_its_timeout*",),
    "calls/test_lean_documents.py": ("test_no_read_on_github_*", "test_github_*"),
    "catalogue/test_lean_parameters.py": (
        "*linear*",
        "test_a_bad_nested_value_is_refused_*",
        "test_describe_tools_says_which_part_there_is_*",
    ),
    "stores/test_store.py": ("test_a_turn_longer_than_its_lease_keeps_it_*", "test_on_trio_*"),
    "stores/test_redis_cluster.py": ("test_a_primary_killed_under_load_*",),  # a failover waited out
    "mcpserver/test_mcp_workers.py": ("test_a_worker_killed_under_load_*", "test_a_redis_primary_killed_*"),
    "mcpserver/test_mcp_oauth.py": ("test_a_new_key_is_not_judged_while_its_issuer_is_down_*",),  # a downtime waited out
    "mcpserver/test_mcp_capacity.py": ("*",),  # sessions that idle out and clients that wait, on purpose
    "mcpserver/test_mcp_connections.py": ("*",),  # read deadlines waited out
    "mcpserver/test_mcp_first_list.py": ("*",),
    "mcpserver/test_mcp_limits.py": ("*",),
    "mcpserver/test_mcp_odd_input.py": ("test_odd_text_*",),  # a few hundred calls over six launched clients
    "mcpserver/test_mcp_roaming.py": ("*",),  # servers and stores restarted on purpose
    "models/test_model_wire.py": ("test_a_request_that_timed_out_is_not_sent_again", "test_the_turn_deadline_covers_the_retries"),
    "calls/test_payload_documents.py": ("*",),  # every public schema's mutations
    "catalogue/test_pointers.py": ("test_mcp_*",),
    "test_redact.py": ("test_a_schema_that_cannot_be_loaded_says_so_without_credentials",),
    "toolsconfig/test_rest_paths.py": ("test_a_trickling_rest_answer_is_cut_at_the_timeout",),
    "load/test_schema.py": ("test_github_*", "test_url_that_does_not_answer"),
    "catalogue/test_search.py": (
        "test_cli_search_json_lists_the_best_tools_first",
        "test_cli_search_text_and_empty_words",
        "test_mutations_the_host_did_not_allow_are_never_found",
    ),
    "session/test_session.py": ("test_a_large_apis_initial_toolset_*", "test_select_tools_description_stays_in_budget_*"),
    "session/test_session_lifetime.py": ("test_an_sdk_model_closes_its_client_under_async_with",),  # imports the openai SDK
}


def _module(item: pytest.Item) -> str:
    """The test's module as the tables name it: its path under tests/, e.g. "mcpserver/test_mcp.py"."""
    try:
        return item.path.relative_to(TESTS).as_posix()
    except ValueError:  # a test file outside tests/, named on the command line
        return item.path.name


def _matches(item: pytest.Item, table: dict[str, tuple[str, ...]]) -> bool:
    patterns = (*table.get("*", ()), *table.get(_module(item), ()))
    return any(fnmatch.fnmatchcase(item.name, pattern) for pattern in patterns)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _matches(item, E2E) or E2E_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.e2e)
        if _matches(item, SLOW):
            item.add_marker(pytest.mark.slow)
    _leave_out_public_schema_tests(config, items)


def _deselects(config: pytest.Config, marker: str) -> bool:
    """Whether `-m` leaves out the tests carrying `marker` (as the fast subset does)."""
    expression = config.getoption("markexpr", "") or ""
    return fnmatch.fnmatchcase(" ".join(expression.split()), f"*not {marker}*")


#: The examples a property test draws by default in a full run (and in CI, whose fast pass loads the
#: `full` profile too), and in the fast subset.
FULL_EXAMPLES, FAST_EXAMPLES = 1000, 100


@pytest.hookimpl(tryfirst=True)  # the profiles exist before hypothesis's plugin loads the one asked for
def pytest_configure(config: pytest.Config) -> None:
    """The fuzz test draws 1,000 examples in a full run (and in CI), 100 in the fast subset; an explicit
    `--hypothesis-profile` wins."""
    from hypothesis import settings

    settings.register_profile("full", max_examples=FULL_EXAMPLES)
    settings.register_profile("fast", max_examples=FAST_EXAMPLES)
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile("fast" if _deselects(config, "slow") else "full")


def examples(full: int, *, fast: int) -> int:
    """How many examples a property test with its own count draws: `full` under the full profile (a
    full run, and CI's fast pass), `fast` in the fast subset of the edit-test loop."""
    from hypothesis import settings

    return full if settings.default.max_examples >= FULL_EXAMPLES else fast
