"""Tests for simuhome's LLM agent (workflow/papers/simuhome/llm.py) against a loopback server that speaks the
OpenAI chat-completions protocol: a scripted "model" that replays the planner's own calls solves episodes through
the real client, the history carries each observation back under its tool_call_id, malformed arguments reach the
model as INVALID_COMMAND and change nothing, a plain reply ends the episode, and the agent is built from the
environment. No network: the server listens on 127.0.0.1."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from workflow.papers.simuhome import agents as A
from workflow.papers.simuhome import episodes as E
from workflow.papers.simuhome import llm, sim


class Handler(BaseHTTPRequestHandler):
    """POST {base}/chat/completions: the next scripted reply, as a "chat.completion" object."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server = self.server
        if not self.path.endswith("/chat/completions"):
            return self.answer(404, {"error": {"message": f"no route {self.path}"}})
        with server.lock:
            server.requests.append(body)
            turn = len(server.requests)
            reply = server.script.pop(0) if server.script else ("text", "out of script")
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
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture()
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.script, srv.requests, srv.lock = [], [], threading.Lock()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    srv.base_url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join()


def agent_for(srv) -> llm.LLMAgent:
    agent = llm.LLMAgent(srv.base_url, "test-key", "scripted-model")
    agent.client = agent.client.with_options(max_retries=0, timeout=10)  # a broken server fails at once
    return agent


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
    assert call.action == "execute_command" and call.action_input == {"_malformed_arguments": raw}
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
    ("", {}), ("{}", {}), ('{"room_id": "kitchen"}', {"room_id": "kitchen"}),
    ("[1]", {"_malformed_arguments": "[1]"}), ("{'a': 1}", {"_malformed_arguments": "{'a': 1}"})])
def test_arguments_are_parsed_to_an_object_or_marked_malformed(raw, parsed):
    assert llm.parse_arguments(raw) == parsed


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
    assert llm.LLMAgent.from_env() is None
    monkeypatch.setenv(llm.ENV_URL, server.base_url)
    assert llm.LLMAgent.from_env() is None  # a URL without a model is not an endpoint
    monkeypatch.setenv(llm.ENV_MODEL, "my-model")
    agent = llm.LLMAgent.from_env()
    assert isinstance(agent, llm.LLMAgent) and agent.name == "llm" and agent.model == "my-model"
    assert str(agent.client.base_url).rstrip("/") == server.base_url and agent.client.api_key == "none"
    monkeypatch.setenv(llm.ENV_KEY, "secret")
    assert llm.LLMAgent.from_env().client.api_key == "secret"


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
    assert "qt4_1_feasible" in capsys.readouterr().out and not server.script
