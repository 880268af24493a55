"""How model requests fail and retry, against loopback servers that misbehave as real ones do.

The SDKs retry on their own; these tests pin what dagtools changes under them: no blind retry of a
timed-out request, no retries of a refused loopback server, at most one retry of a 500 that repeats
word for word, one deadline per model turn, and errors that name the server's own cause.
"""

from __future__ import annotations

import socket
import time

import pytest

from dagtools.models import OpenAIModel
from tests.fake_models import FRIES_TURNS, anthropic_server, gemini_server, openai_server, responses_server  # noqa: F401
from tests.models.test_models import make_model, run_fries

# What llama-cpp-python's server answers, as HTTP 500, to a request it cannot read: the cause is at the end.
LONG_CAUSE = "Request validation failed: " + "the chat template could not render this conversation; " * 8 + "messages.2.content is null"


async def test_tool_choice_auto_and_no_null_content_satisfy_a_llama_cpp_style_server(openai_server):
    openai_server.null_content_500 = True
    _, result = await run_fries(make_model(openai_server))
    assert result.reason == "saved", result.message
    assert openai_server.problems == []
    assert len(openai_server.requests) == len(FRIES_TURNS)
    assert all(r["tool_choice"] == "auto" for r in openai_server.requests)


async def test_transient_errors_keep_the_sdks_retries(openai_server, gemini_server):
    openai_server.statuses = [500, 503]
    _, result = await run_fries(make_model(openai_server))
    assert result.reason == "saved", result.message
    assert len(openai_server.requests) == len(FRIES_TURNS) + 2
    gemini_server.statuses = [503]
    _, result = await run_fries(make_model(gemini_server))
    assert result.reason == "saved", result.message
    assert len(gemini_server.requests) == len(FRIES_TURNS) + 1


@pytest.mark.parametrize("fixture", ["openai_server", "responses_server", "anthropic_server", "gemini_server"])
async def test_a_500_that_repeats_is_retried_once_and_named(fixture, request):
    server = request.getfixturevalue(fixture)
    server.always_status = 500
    server.error_text = LONG_CAUSE
    _, result = await run_fries(make_model(server, max_retries=4))
    assert result.reason == "model_error"
    assert len(server.requests) == 2
    assert "HTTP 500 twice with the same error" in result.message
    assert "messages.2.content is null" in result.message  # the whole cause, not its first 300 characters


async def test_rate_limits_are_retried_until_they_run_out(anthropic_server):
    anthropic_server.always_status = 429
    _, result = await run_fries(make_model(anthropic_server, max_retries=2))
    assert result.reason == "model_error"
    assert "kept failing after 3 attempts (HTTP 429): overloaded" in result.message
    assert len(anthropic_server.requests) == 3


@pytest.mark.parametrize("status", [401, 403])
async def test_bad_key_is_a_clear_error_without_retry(openai_server, status):
    openai_server.always_status = status
    openai_server.error_text = "Incorrect API key provided: test-key. You can find your API key in your account settings."
    _, result = await run_fries(make_model(openai_server))
    assert result.reason == "model_error"
    assert f"HTTP {status}" in result.message and "Incorrect API key provided: [redacted]." in result.message
    assert "OPENAI_API_KEY" in result.message and "test-key" not in result.message
    assert len(openai_server.requests) == 1
    assert result.outputs == {}


@pytest.mark.parametrize("fixture", ["anthropic_server", "gemini_server", "responses_server"])
async def test_every_provider_names_its_key_and_the_servers_words(fixture, request):
    server = request.getfixturevalue(fixture)
    server.always_status = 401
    server.error_text = "API key not valid. Please pass a valid API key."
    _, result = await run_fries(make_model(server))
    assert result.reason == "model_error" and len(server.requests) == 1
    assert "HTTP 401" in result.message and "API key not valid" in result.message
    assert ("GEMINI_API_KEY" if fixture == "gemini_server" else "API_KEY") in result.message


async def test_a_request_that_timed_out_is_not_sent_again(openai_server):
    openai_server.delay = 1.5
    _, result = await run_fries(make_model(openai_server, timeout=0.3, max_retries=3))
    assert result.reason == "model_error"
    assert "sent no answer in time" in result.message and "not sent again" in result.message
    assert len(openai_server.requests) == 1


async def test_the_turn_deadline_covers_the_retries(gemini_server):
    gemini_server.always_status = 503
    gemini_server.delay = 0.3
    started = time.monotonic()
    _, result = await run_fries(make_model(gemini_server, max_retries=20), turn_timeout=1.0)
    assert result.reason == "model_error" and "deadline of 1 s" in result.message
    assert 2 <= len(gemini_server.requests) <= 5  # the deadline, not the 20 retries, ended the turn
    assert time.monotonic() - started < 10  # 20 retries of 0.3 s and their backoff would take longer; loose for a loaded machine


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_a_refused_local_server_fails_at_once_and_says_what_to_check():
    port = _closed_port()
    started = time.monotonic()
    _, result = await run_fries(OpenAIModel("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=4))
    assert time.monotonic() - started < 2
    assert result.reason == "model_error" and result.steps == 1
    assert f"Nothing answers at http://127.0.0.1:{port}/v1/chat/completions" in result.message
    assert "model server is running" in result.message and "--base-url" in result.message
