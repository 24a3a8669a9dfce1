"""Tests for simuhome's LLM agent (workflow/papers/simuhome/llm.py) against a loopback server that speaks the
OpenAI chat-completions protocol: a scripted "model" that replays the planner's own calls solves episodes through
the real client, the history carries each observation back under its tool_call_id, malformed arguments reach the
model as INVALID_COMMAND and change nothing, a plain reply ends the episode, and the agent is built from the
environment. A hostile server (arguments nested 200,000 deep, a 5,000-digit integer, arguments as an object, no
choices, a body that is not JSON, an HTTP error, a reply that never comes) costs an error observation or a failed
episode with its reason, never the run; each row is on disk as soon as its episode ends. No network: the server
listens on 127.0.0.1."""
import csv
import functools
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from workflow.core import params
from workflow.papers.simuhome import agents as A
from workflow.papers.simuhome import episodes as E
from workflow.papers.simuhome import llm, sim


class Handler(BaseHTTPRequestHandler):
    """POST {base}/chat/completions: the next scripted reply, as a "chat.completion" object. A reply is ("text",
    content), ("calls", [(tool, arguments: a JSON string, or any JSON value to send it unencoded), ...]),
    ("raw", status, content type, body bytes) sent as it is, or ("stall", seconds): nothing for that long (or until
    the server stops), then a text reply."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server = self.server
        if not self.path.endswith("/chat/completions"):
            return self.answer(404, {"error": {"message": f"no route {self.path}"}})
        with server.lock:
            server.requests.append(body)
            turn = len(server.requests)
            reply = server.script.pop(0) if server.script else ("text", "out of script")
        if reply[0] == "raw":
            return self.send(*reply[1:])
        if reply[0] == "stall":
            server.release.wait(reply[1])
            reply = ("text", "too late")
        if reply[0] == "text":
            message, finish = {"role": "assistant", "content": reply[1]}, "stop"
        else:  # ("calls", [(tool, arguments as a JSON string), ...])
            message = {"role": "assistant", "content": f"thinking at turn {turn}", "tool_calls": [
                {"id": f"call_{turn}_{i}", "type": "function", "function": {"name": tool, "arguments": arguments}}
                for i, (tool, arguments) in enumerate(reply[1])]}
            finish = "tool_calls"
        self.answer(200, {"id": f"chatcmpl-{turn}", "object": "chat.completion", "created": 0, "model": body["model"],
                          "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
                          "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    def answer(self, code: int, obj: dict):
        self.send(code, "application/json", json.dumps(obj).encode())

    def send(self, code: int, content_type: str, data: bytes):
        try:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up on a stalled reply
            pass

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture()
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.script, srv.requests, srv.lock, srv.release = [], [], threading.Lock(), threading.Event()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    srv.base_url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    yield srv
    srv.release.set()  # stalled replies end now
    srv.shutdown()
    srv.server_close()
    thread.join()


@functools.cache
def limits() -> dict:
    """params.yaml's simuhome.llm: the tests bound the endpoint as the CLI does."""
    return params.section(params.load("default"), "simuhome.llm")


def agent_for(srv, **over) -> llm.LLMAgent:
    """The agent on the loopback server, with no retries (a broken server fails at once) unless `over` says."""
    return llm.LLMAgent(srv.base_url, "test-key", "scripted-model",
                        **limits() | {"max_retries": 0, "read_timeout_s": 10} | over)


def calls(*pairs) -> tuple:
    """One reply of tool calls, arguments serialised as the protocol sends them."""
    return "calls", [(tool, json.dumps(args)) for tool, args in pairs]


def planner_steps(category: str, index: int = 0) -> tuple[dict, list[dict]]:
    ep = E.episode(category, index, 0)
    row, steps = A.run_episode(ep, A.PlannerAgent())
    assert row["success"], row  # the replay below is meaningful only for a trajectory that wins
    return ep, steps


def tool_messages(request: dict) -> list[dict]:
    return [m for m in request["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("category, per_reply", [("qt3_feasible", 1), ("qt4_2_feasible", 2)])
def test_the_llm_agent_solves_an_episode_and_carries_each_observation_back(server, category, per_reply):
    ep, steps = planner_steps(category)
    pairs = [(s["action"], s["action_input"]) for s in steps]
    assert pairs[-1][0] == "finish" and any(a == "schedule_workflow" for a, _ in pairs) == category.startswith("qt4")
    # the planner's calls, `per_reply` to a reply (2: parallel tool calls, answered in order)
    server.script = [calls(*pairs[i:i + per_reply]) for i in range(0, len(pairs), per_reply)]
    row, llm_steps = A.run_episode(ep, agent_for(server))
    assert row["success"] is True and row["answer"] == pairs[-1][1]["answer"]
    assert [(s["action"], s["action_input"]) for s in llm_steps] == pairs
    assert len(server.requests) == -(-len(pairs) // per_reply) and not server.script  # one request per reply
    system, user = server.requests[0]["messages"][:2]
    assert system["role"] == "system" and "INFEASIBLE:" in system["content"]
    assert all(r in system["content"] for r in E.REASONS)
    assert user == {"role": "user", "content": llm.user_message(ep)} and ep["query"] in user["content"]
    for request in server.requests:
        assert request["model"] == "scripted-model"
        names = [t["function"]["name"] for t in request["tools"] if t["type"] == "function"]
        assert sorted(names) == sorted(sim.TOOL_SPECS) and len(set(names)) == 14
    for turn, request in enumerate(server.requests[1:], start=1):
        # the history ends with the previous reply's assistant message and one tool message per tool call of it
        previous = request["messages"][-1 - per_reply]
        assert previous["role"] == "assistant"
        ids = [c["id"] for c in previous["tool_calls"]]
        answers = request["messages"][-per_reply:]
        assert [m["role"] for m in answers] == ["tool"] * per_reply
        assert [m["tool_call_id"] for m in answers] == ids == [f"call_{turn}_{i}" for i in range(per_reply)]
        done = [json.loads(m["content"]) for m in tool_messages(request)]
        assert done == [json.loads(json.dumps(s["observation"])) for s in llm_steps[:turn * per_reply]]
        assert request["messages"][:len(server.requests[turn - 1]["messages"])] == server.requests[turn - 1]["messages"]


def test_malformed_arguments_reach_the_model_as_invalid_command_and_change_nothing(server):
    ep = E.episode("qt3_feasible", 0, 0)
    home = sim.Home.from_config(ep["initial_home_config"])
    target = next(iter(home.devices.values()))
    raw = json.dumps({"device_id": target.id, "cluster": "OnOff", "command": "Toggle"})[:-1]  # the closing brace lost
    server.script = [("calls", [("execute_command", raw)]), ("text", "Sorry, done.")]
    policy = agent_for(server).policy(ep, np.random.default_rng(0))
    call = next(policy)
    assert call.action == "execute_command" and list(call.action_input) == ["_malformed_arguments"]
    assert "not usable JSON" in call.action_input["_malformed_arguments"]
    before = home.state()
    obs = home.call(call.action, call.action_input)
    assert obs["status"] == "INVALID_COMMAND" and "_malformed_arguments" in obs["error"]
    assert home.state() == before
    last = policy.send(obs)
    assert (last.action, last.action_input) == ("finish", {"answer": "Sorry, done."})
    [answer] = tool_messages(server.requests[1])
    assert answer["tool_call_id"] == "call_1_0" and json.loads(answer["content"]) == obs
    # the same arguments well formed do change the home: the refusal above is the parser's, not a no-op command
    assert home.call("execute_command", json.loads(raw + "}"))["status"] == "SUCCESS" and home.state() != before


@pytest.mark.parametrize("raw, parsed", [
    ("", {}), (None, {}), ("{}", {}), ('{"room_id": "kitchen"}', {"room_id": "kitchen"}),
    ({"room_id": "kitchen"}, {"room_id": "kitchen"}),  # an object in place of the protocol's string
    ("[1]", "a JSON list, not an object"), ("{'a': 1}", "not usable JSON (Expecting property name"),
    (7, "got int"), ("[" * 33 + "]" * 33, "nested deeper than 32 levels"),
    ("[" * 200_000 + "]" * 200_000, "400000 characters, over the limit"),
    ('{"value": ' + "9" * 5000 + "}", "4300 digits"),
    ('{"a": "' + '\\"' * 140_000, "Unterminated string"),  # scanned in one pass: quadratic would take minutes
])
def test_arguments_are_parsed_to_an_object_or_marked_malformed_with_the_reason(raw, parsed):
    out = llm.parse_arguments(raw, max_bytes=300_000, max_depth=32)
    if isinstance(parsed, dict):
        assert out == parsed
    else:
        assert list(out) == ["_malformed_arguments"] and parsed in out["_malformed_arguments"]


@pytest.mark.parametrize("text, deeper", [
    ("[[1]]", False), ("[[[1]]]", True), ('{"a": "[[[[[[", "b": [2]}', False), ('["\\"[[[[", [3]]', False),
    ('[["unterminated [[[[', False), ("{}" * 1000 + "[[[]]]", True)])
def test_depth_is_counted_outside_strings(text, deeper):
    assert llm.too_deep(text, 2) is deeper


def test_a_plain_reply_ends_the_episode_with_its_text_as_the_answer(server):
    ep = E.episode("qt1_feasible", 0, 0)
    text = "It is 24.5 degrees in there."
    server.script = [calls(("get_rooms", {})), ("text", text), calls(("get_rooms", {}))]
    row, steps = A.run_episode(ep, agent_for(server))
    assert [s["action"] for s in steps] == ["get_rooms", "finish"]
    assert row["answer"] == text and steps[-1]["action_input"] == {"answer": text}
    assert len(server.requests) == 2 and len(server.script) == 1  # nothing asked after the plain reply


def test_the_agent_comes_from_the_environment(monkeypatch, server):
    for name in (llm.ENV_URL, llm.ENV_KEY, llm.ENV_MODEL):
        monkeypatch.delenv(name, raising=False)
    assert llm.LLMAgent.from_env(limits()) is None
    monkeypatch.setenv(llm.ENV_URL, server.base_url)
    assert llm.LLMAgent.from_env(limits()) is None  # a URL without a model is not an endpoint
    monkeypatch.setenv(llm.ENV_MODEL, "my-model")
    agent = llm.LLMAgent.from_env(limits())
    assert isinstance(agent, llm.LLMAgent) and agent.name == "llm" and agent.model == "my-model"
    assert str(agent.client.base_url).rstrip("/") == server.base_url and agent.client.api_key == "none"
    # params.yaml's bounds, not the SDK's defaults (600 s to read, 2 retries)
    assert (agent.client.timeout.connect, agent.client.timeout.read, agent.client.max_retries) == (
        limits()["connect_timeout_s"], limits()["read_timeout_s"], limits()["max_retries"])
    monkeypatch.setenv(llm.ENV_KEY, "secret")
    assert llm.LLMAgent.from_env(limits()).client.api_key == "secret"


def test_the_cli_runs_episodes_and_names_the_variables_when_they_are_absent(monkeypatch, server, tmp_path, capsys):
    for name in (llm.ENV_URL, llm.ENV_KEY, llm.ENV_MODEL):
        monkeypatch.delenv(name, raising=False)
    ep, steps = planner_steps("qt4_1_feasible")
    episodes = tmp_path / "episodes.json"
    episodes.write_text(json.dumps([ep, E.episode("qt1_feasible", 0, 0)]))
    with pytest.raises(SystemExit) as err:
        llm.main(["--episodes", str(episodes)])
    assert all(name in str(err.value) for name in (llm.ENV_URL, llm.ENV_KEY, llm.ENV_MODEL))
    monkeypatch.setenv(llm.ENV_URL, server.base_url)
    monkeypatch.setenv(llm.ENV_MODEL, "scripted-model")
    server.script = [calls((s["action"], s["action_input"])) for s in steps]
    out = tmp_path / "rows.csv"
    llm.main(["--episodes", str(episodes), "--max-episodes", "1", "--out", str(out)])
    lines = out.read_text().splitlines()
    assert len(lines) == 2 and lines[1].startswith(f"{ep['meta']['id']},qt4_1_feasible,True")
    assert lines[0].endswith(",error") and lines[1].endswith(",")  # no endpoint error
    assert "qt4_1_feasible" in capsys.readouterr().out and not server.script


# ---- a hostile endpoint ------------------------------------------------------------------------------------------

DEEP = "[" * 200_000 + "]" * 200_000  # json.loads: RecursionError
HUGE_INT = '{"device_id": "x", "cluster": "FanControl", "attribute": "PercentSetting", "value": ' + "9" * 5000 + "}"


@pytest.mark.parametrize("raw, reason", [(DEEP, "nested deeper than 32 levels"), (HUGE_INT, "4300 digits")])
def test_hostile_arguments_are_an_error_the_model_sees_and_the_episode_goes_on(server, raw, reason):
    ep = E.episode("qt1_feasible", 0, 0)
    server.script = [("calls", [("write_attribute", raw)]), ("text", "Sorry, I could not.")]
    row, steps = A.run_episode(ep, agent_for(server))
    assert [s["action"] for s in steps] == ["write_attribute", "finish"] and row["answer"] == "Sorry, I could not."
    first = steps[0]
    assert first["observation"]["status"] == "INVALID_COMMAND"
    assert reason in first["action_input"]["_malformed_arguments"]
    [answer] = tool_messages(server.requests[1])
    assert json.loads(answer["content"]) == first["observation"]


def test_arguments_sent_as_an_object_are_taken_and_go_back_as_a_string(server):
    ep = E.episode("qt1_feasible", 0, 0)
    args = {"room_id": ep["user_location"]}
    server.script = [("calls", [("get_room_devices", args)]), ("text", "Done.")]
    row, steps = A.run_episode(ep, agent_for(server))
    assert steps[0]["action_input"] == args and steps[0]["observation"]["status"] == "SUCCESS"
    assistant = server.requests[1]["messages"][-2]
    assert assistant["tool_calls"][0]["function"]["arguments"] == json.dumps(args)  # the protocol's string


def chat_completion(**fields) -> bytes:
    return json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m", **fields}).encode()


def run_two(server, agent, tmp_path) -> tuple[list[dict], list[dict]]:
    """llm.run on two episodes, the second answered by a plain reply: (rows returned, rows on disk)."""
    episodes = [E.episode("qt1_feasible", 0, 0), E.episode("qt1_feasible", 1, 0)]
    server.script.append(("text", "It is 24 degrees."))
    out = tmp_path / "rows.csv"
    rows = llm.run(episodes, agent, max_steps=20, seed=0, out=out)
    with open(out, newline="") as f:
        return rows, list(csv.DictReader(f))


def assert_failed_then_continued(rows, on_disk, reason):
    first, second = rows
    assert first["success"] is False and first["steps"] == 0 and reason in first["error"]
    assert first["error"].startswith("endpoint: ")
    assert second["error"] == "" and second["answer"] == "It is 24 degrees."  # the run went on
    assert [r["error"] for r in on_disk] == [first["error"], ""]


@pytest.mark.parametrize("reply, reason", [
    (("raw", 200, "application/json", chat_completion(choices=[])), "endpoint: empty choices"),
    (("raw", 200, "application/json", chat_completion()), "endpoint: no choices"),
    (("raw", 200, "text/html", b"<html>502 Bad Gateway</html>"), "the body is not usable JSON (Expecting value"),
    (("raw", 200, "application/json", b'{"choices": [{"message": '), "the body is not usable JSON"),
    (("raw", 200, "application/json", DEEP.encode()), "nested deeper than 32 levels"),
    (("raw", 200, "application/json", b" " * 1_000_001), "endpoint: reply over 1000000 bytes"),
    (("raw", 200, "application/json", chat_completion(choices=[{"message": {"tool_calls": [{"function": 3}]}}])),
     "tool_calls is not a list of named function calls"),
    (("raw", 500, "application/json", b'{"error": {"message": "the model crashed"}}'),
     'endpoint: HTTP 500: {"error": {"message": "the model crashed"}}'),
])
def test_a_turn_without_a_usable_reply_fails_its_episode_with_the_reason_and_the_run_goes_on(
        server, tmp_path, reply, reason):
    server.script = [reply]
    assert_failed_then_continued(*run_two(server, agent_for(server), tmp_path), reason)


def test_a_stalled_endpoint_times_out_within_the_retry_bound(server, tmp_path):
    server.script = [("stall", 2.0), ("stall", 2.0)]  # each longer than the read timeout
    rows, on_disk = run_two(server, agent_for(server, read_timeout_s=0.5, max_retries=1), tmp_path)
    assert_failed_then_continued(rows, on_disk, "endpoint: timeout after 0.5 s")
    assert len(server.requests) == 3  # 1 + max_retries tries for the first episode, one for the second
    assert rows[0]["wall_s"] < 3.5  # two reads of 0.5 s and one back-off, not the stall's 2 s twice


def test_an_endpoint_that_is_not_there_fails_the_episode(server, tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    agent = llm.LLMAgent(f"http://127.0.0.1:{port}/v1", "k", "m", **limits() | {"max_retries": 0})
    rows = llm.run([E.episode("qt1_feasible", 0, 0)], agent, max_steps=20, seed=0, out=tmp_path / "rows.csv")
    assert rows[0]["success"] is False and rows[0]["error"].startswith("endpoint: connection failed")


def test_each_row_is_on_disk_when_its_episode_ends(monkeypatch, server, tmp_path):
    episodes = tmp_path / "episodes.json"
    episodes.write_text(json.dumps([E.episode("qt1_feasible", i, 0) for i in range(3)]))
    out = tmp_path / "rows.csv"
    monkeypatch.setenv(llm.ENV_URL, server.base_url)
    monkeypatch.setenv(llm.ENV_MODEL, "scripted-model")
    server.script = [("text", "It is 24 degrees.")]
    real, seen = A.run_episode, []

    def crash_on_the_second(ep, agent, **kw):
        seen.append(agent)
        if len(seen) == 2:
            on_disk = out.read_text().splitlines()  # read while the run holds the file open
            assert len(on_disk) == 2 and on_disk[1].startswith(E.episode("qt1_feasible", 0, 0)["meta"]["id"])
            raise RuntimeError("the run dies here")
        return real(ep, agent, **kw)

    monkeypatch.setattr(A, "run_episode", crash_on_the_second)
    with pytest.raises(RuntimeError, match="the run dies here"):
        llm.main(["--episodes", str(episodes), "--out", str(out), "--profile", "smoke"])
    assert len(seen) == 2 and len(out.read_text().splitlines()) == 2  # episode 1's row survived the crash
    timeout = seen[0].client.timeout  # the CLI's agent carries the profile's bounds
    assert (timeout.connect, timeout.read, seen[0].client.max_retries) == (
        limits()["connect_timeout_s"], limits()["read_timeout_s"], limits()["max_retries"])
