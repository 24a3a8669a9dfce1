"""An agent for any OpenAI-compatible chat endpoint (a user's own model), under the same ReAct loop as the scripted
agents (`agents.run_episode`).

    SIMUHOME_LLM_BASE_URL=http://127.0.0.1:8000/v1 SIMUHOME_LLM_MODEL=my-model \\
        python -m workflow.papers.simuhome.llm --episodes results/simuhome/episodes/s0.json --max-episodes 24

The model sees only what the paper's agents see: a system prompt, the user's query and where the user is, and the
simulator's tools as function-calling JSON (`sim.TOOL_SPECS`); never the episode's `parse` or `eval`. Each tool
call of a reply is one ReAct step (its observation goes back as a "tool" message); a reply without a tool call ends
the episode with its text as the answer, as a `finish` call does. Not run by default: there is no endpoint offline
(the tests use a loopback server that speaks the protocol).

The endpoint is not trusted (params.yaml `simuhome.llm` bounds it): each turn has a connect and a read timeout and a
bounded number of retries; a body is read up to a size bound and parsed only once its nesting depth is known to be
bounded. Malformed arguments reach the model as an error observation; a turn without a usable reply (an HTTP error,
a timeout, a body that is not a chat completion) ends its episode as failed, with the reason in the row's `error`,
and the run goes on. Each row is on disk as soon as its episode ends.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
from pathlib import Path

from workflow.core import params

from . import agents as A
from . import episodes as E
from . import sim

ENV_URL, ENV_KEY, ENV_MODEL = "SIMUHOME_LLM_BASE_URL", "SIMUHOME_LLM_API_KEY", "SIMUHOME_LLM_MODEL"

REASON_HINTS = {  # what each reason class of episodes.REASONS means, in the model's words
    "missing_device": "the device asked for is not in that room",
    "missing_attribute": "no device or sensor reports what was asked",
    "no_capable_device": "no device in the room can move that variable in that direction",
    "out_of_range": "a value is outside what the device accepts",
    "invalid_state": "an appliance is not in a state that allows the request (e.g. pausing one that is not running)",
    "past_time": "a requested time has already passed today",
    "not_running": "the appliance an action is timed against is not running",
    "contradiction": "the request's timing contradicts itself",
}


def system_prompt() -> str:
    """The instructions: the ReAct protocol, Matter's units, the delayed feedback of scheduling, and the answer
    formats the rule-based judge reads (a number first; INFEASIBLE: and a reason class by its exact name)."""
    reasons = "\n".join(f"  - {r}: {REASON_HINTS.get(r, r)}" for r in E.REASONS)
    return f"""You are a smart-home assistant. You act on the home only through the tools, which speak Matter.
Work step by step (ReAct): think briefly about what to do next, then call exactly one tool and read its result
before the next call. Do not guess ids: get_rooms lists rooms, get_room_devices a room's devices, and
get_device_structure what a device accepts. Every step takes a few seconds of the home's time.

Matter units and rules:
  - temperatures and set-points are centi-degrees Celsius (24 degC is 2400); Thermostat.SystemMode 3 is cool,
    4 heat, 7 fan only, 0 off;
  - FanControl.PercentSetting is 0-100 (percent);
  - LevelControl.MoveToLevel takes args {{"level": 1-254}} (100 % brightness is 254);
  - OperationalState.CountdownTime is the seconds left of an appliance's cycle;
  - a device must be on (OnOff.On) before it accepts other settings or commands;
  - a failed call answers a Matter status (NOT_FOUND, CONSTRAINT_ERROR, INVALID_IN_STATE, ...) and changes nothing.

Time: times are HH:MM:SS (24 h); get_current_time gives the time now. For an action at a later time, or after an
appliance finishes, use schedule_workflow: it returns a receipt only and does not check the actions, so check the
devices, values and states yourself before scheduling.

When you are done, call finish with your answer to the user:
  - for a question, the answer starts with the value: a number in the units the user asked for (degC, %, lux,
    ug/m3, minutes), or on / off;
  - for a request that cannot be carried out, the answer starts with "INFEASIBLE:" followed by one reason class,
    written exactly as below, then a short explanation:
{reasons}
  - otherwise, a short confirmation."""


def user_message(ep: dict) -> str:
    """The query as the user says it, with where the user is (room id included: the tools take ids)."""
    room = ep["user_location"]
    return f"(I am in the {E.room_name(room)}, room id {room}.) {ep['query']}"


def tool_list() -> list[dict]:
    """Every simulator tool, in the chat-completions `tools` format."""
    return [{"type": "function", "function": spec} for spec in sim.TOOL_SPECS.values()]


class EndpointError(Exception):
    """A turn the endpoint did not answer usably: its episode ends failed with this reason, the run goes on."""


# a JSON string, skipped whole (an unterminated one runs to the end: a string start never fails, so the scan never
# restarts inside one and stays linear), or a bracket
JSON_TOKENS = re.compile(r'"[^"\\]*(?:\\(?:.|\Z)[^"\\]*)*(?:"|\Z)|[\[\]{}]', re.S)


def too_deep(text: str, max_depth: int) -> bool:
    """Whether JSON text nests objects and arrays deeper than max_depth, brackets inside strings not counted.
    json.loads recurses once per level (RecursionError past about a thousand): the depth is known before it runs.
    Stops at the first level too many, so a hostile text costs one regex pass at most."""
    depth = 0
    for token in JSON_TOKENS.finditer(text):
        bracket = token.group()
        if bracket in "[{":
            depth += 1
            if depth > max_depth:
                return True
        elif bracket in "]}":
            depth -= 1
    return False


def bounded_json(raw: str | bytes, max_bytes: int, max_depth: int):
    """JSON parsed only within bounds; ValueError naming what is wrong (too large, too deep, not UTF-8, not JSON,
    an integer past Python's 4,300-digit limit). Size is counted in bytes for a body, characters for a string."""
    if len(raw) > max_bytes:
        raise ValueError(f"{len(raw)} {'bytes' if isinstance(raw, bytes) else 'characters'}, over the limit of "
                         f"{max_bytes}")
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if too_deep(text, max_depth):
        raise ValueError(f"nested deeper than {max_depth} levels")
    return json.loads(text)


def parse_arguments(raw, max_bytes: int, max_depth: int) -> dict:
    """A tool call's arguments. Malformed ones (not JSON, JSON that is not an object, beyond the bounds) are passed
    on as {"_malformed_arguments": what is wrong}: an argument no tool has, so the simulator answers INVALID_COMMAND
    (and changes nothing) and the model sees the error, as it would any other. Empty arguments are {} (servers send
    "" for tools without parameters); an object sent in place of the protocol's JSON string is taken as it is (it
    was parsed within bounds with the body)."""
    if isinstance(raw, dict):
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if not isinstance(raw, str):
        return {"_malformed_arguments": f"arguments must be a JSON object in a string, got {type(raw).__name__}"}
    try:
        parsed = bounded_json(raw, max_bytes, max_depth)
    except (ValueError, RecursionError) as err:  # RecursionError: a net under too_deep, which should exclude it
        return {"_malformed_arguments": f"not usable JSON ({err})"}
    if not isinstance(parsed, dict):
        return {"_malformed_arguments": f"a JSON {type(parsed).__name__}, not an object"}
    return parsed


def reply_message(body) -> dict:
    """The message of a chat.completion body's first choice, checked for the shape the policy reads (text content
    or none; tool calls, each a function with a name); EndpointError naming what is missing otherwise."""
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices:
        raise EndpointError("endpoint: empty choices" if choices == [] else "endpoint: no choices in the reply")
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise EndpointError("endpoint: the first choice has no message")
    if not isinstance(message.get("content"), (str, type(None))):
        raise EndpointError("endpoint: the message's content is not text")
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list) or not all(
            isinstance(c, dict) and isinstance(c.get("function"), dict) and isinstance(c["function"].get("name"), str)
            for c in calls):
        raise EndpointError("endpoint: tool_calls is not a list of named function calls")
    return message


def read_bounded(chunks, max_bytes: int) -> bytes:
    """A streamed body, refused as soon as it passes max_bytes: a runaway server costs that much memory at most."""
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) > max_bytes:
            raise EndpointError(f"endpoint: reply over {max_bytes} bytes")
    return bytes(body)


def arguments_text(arguments) -> str:
    """Arguments as the protocol carries them in the history: a JSON string (an object sent in its place re-encoded)."""
    if isinstance(arguments, str):
        return arguments
    return "" if arguments is None else json.dumps(arguments)


def assistant_message(message: dict) -> dict:
    """The reply as it goes back into the history: the protocol requires the assistant message with its
    tool_calls before the "tool" messages that answer them."""
    out = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        out["tool_calls"] = [{"id": c.get("id"), "type": "function",
                              "function": {"name": c["function"]["name"],
                                           "arguments": arguments_text(c["function"].get("arguments"))}}
                             for c in message["tool_calls"]]
    return out


def tool_message(call_id: str, observation: dict) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(observation)}


class LLMAgent:
    """A chat model with function calling as a ReAct agent: `policy` is a generator of agents.Call, like the
    scripted agents'. The limits (params.yaml `simuhome.llm`) bound what one turn may cost and what is parsed."""
    name = "llm"

    def __init__(self, base_url: str, api_key: str, model: str, *, connect_timeout_s: float, read_timeout_s: float,
                 max_retries: int, max_reply_bytes: int, max_json_depth: int, temperature: float = 0.0):
        from openai import OpenAI, Timeout  # imported here: the scripted agents and the pipeline do not need it

        # the SDK's own defaults (600 s to read, 2 retries) let one stuck turn take half an hour
        self.timeout = Timeout(read_timeout_s, connect=connect_timeout_s)
        self.client = OpenAI(base_url=base_url, api_key=api_key, timeout=self.timeout, max_retries=max_retries)
        self.model, self.temperature = model, temperature
        self.max_reply_bytes, self.max_json_depth = max_reply_bytes, max_json_depth
        self.error = ""  # why the last episode's endpoint failed it ("" when it did not)

    @classmethod
    def from_env(cls, limits: dict) -> "LLMAgent | None":
        """The agent for the endpoint the environment names, None when it names none (URL or model absent);
        `limits` is params.yaml's `simuhome.llm`."""
        url, model = os.environ.get(ENV_URL), os.environ.get(ENV_MODEL)
        if not url or not model:
            return None
        return cls(url, os.environ.get(ENV_KEY) or "none", model, **limits)

    def request(self, messages: list[dict], rng) -> bytes:
        """One turn's raw body, read within the size bound; EndpointError for whatever the transport or the server
        did instead. At temperature 0 the reply is greedy; above it, a seed drawn from the episode's generator goes
        with the request (servers that honour it then sample reproducibly)."""
        import httpx2  # the SDK's transport: its errors surface unwrapped while a streamed body is read
        import openai

        extra = {"seed": int(rng.integers(2 ** 31))} if self.temperature > 0 else {}
        try:
            with self.client.chat.completions.with_streaming_response.create(
                    model=self.model, messages=messages, tools=tool_list(), temperature=self.temperature,
                    **extra) as response:
                return read_bounded(response.iter_bytes(), self.max_reply_bytes)
        except (openai.APITimeoutError, httpx2.TimeoutException) as err:
            if isinstance(err.__cause__ or err, httpx2.ConnectTimeout):
                raise EndpointError(f"endpoint: no connection within {self.timeout.connect:g} s") from err
            raise EndpointError(f"endpoint: timeout after {self.timeout.read:g} s") from err
        except openai.APIStatusError as err:
            raise EndpointError(f"endpoint: HTTP {err.status_code}: {err.response.text[:200]}") from err
        except openai.APIConnectionError as err:
            raise EndpointError(f"endpoint: connection failed ({err.__cause__ or err})") from err
        except (openai.OpenAIError, httpx2.HTTPError) as err:
            raise EndpointError(f"endpoint: {type(err).__name__}: {str(err)[:200]}") from err

    def complete(self, messages: list[dict], rng) -> dict:
        """One turn: the reply's message (as the body has it, shape checked); EndpointError when there is none."""
        body = self.request(messages, rng)
        try:
            parsed = bounded_json(body, self.max_reply_bytes, self.max_json_depth)
        except (ValueError, RecursionError) as err:
            raise EndpointError(f"endpoint: the body is not usable JSON ({err})") from None
        return reply_message(parsed)

    def policy(self, ep: dict, rng):
        """An endpoint that fails a turn ends the episode unfinished (so failed): the generator stops and
        `self.error` keeps the reason for the episode's row."""
        self.error = ""
        messages = [{"role": "system", "content": system_prompt()}, {"role": "user", "content": user_message(ep)}]
        while True:
            try:
                message = self.complete(messages, rng)
            except EndpointError as err:
                self.error = str(err)
                return
            messages.append(assistant_message(message))
            text = message.get("content") or ""
            if not message.get("tool_calls"):  # a plain reply is the final answer
                yield A.Call(text, "finish", {"answer": text})
                return
            for call in message["tool_calls"]:
                # run_episode stops sending after a finish (or at max_steps); later calls of the reply then go unrun
                args = parse_arguments(call["function"].get("arguments"), self.max_reply_bytes, self.max_json_depth)
                obs = yield A.Call(text, call["function"]["name"], args)
                messages.append(tool_message(call.get("id"), obs))


# ---- the CLI ---------------------------------------------------------------------------------------------------

def run(episodes: list[dict], agent, max_steps: int, seed: int, out: Path) -> list[dict]:
    """One result row per episode (agents.run_episode's, with the endpoint's `error`), in order. Each row is written
    to `out` (CSV) as its episode ends: a crash or a kill loses no episode already run."""
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    with open(out, "w", newline="") as f:
        for i, ep in enumerate(episodes):
            row, _ = A.run_episode(ep, agent, max_steps=max_steps, seed=seed)
            row["error"] = agent.error
            write_row(f, row, header=i == 0)
            rows.append(row)
            outcome = "ok" if row["success"] else f"failed, {row['error']}" if row["error"] else "failed"
            print(f"[{i + 1}/{len(episodes)}] {row['episode']}: {outcome} ({row['steps']} steps)", file=sys.stderr)
    return rows


def success_by_category(rows: list[dict]) -> dict[str, tuple[int, int]]:
    """category -> (successes, episodes), in the benchmark's category order."""
    out = {}
    for c in E.CATEGORIES:
        mine = [r["success"] for r in rows if r["category"] == c]
        if mine:
            out[c] = (sum(mine), len(mine))
    return out


def write_row(f, row: dict, header: bool) -> None:
    """One row onto the open CSV (the header before the first), flushed: on disk as soon as its episode ends."""
    writer = csv.DictWriter(f, fieldnames=list(row))
    if header:
        writer.writeheader()
    writer.writerow(row)
    f.flush()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=Path, required=True, help="a JSON list of episodes (episodes.generate's)")
    parser.add_argument("--max-episodes", type=int, default=None, help="run only the first N episodes")
    parser.add_argument("--out", type=Path, default=Path("simuhome_llm_runs.csv"), help="the result rows (CSV)")
    parser.add_argument("--max-steps", type=int, default=20, help="the ReAct step limit (the paper's 20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", default="default", help="the params profile whose simuhome.llm limits apply")
    args = parser.parse_args(argv)
    agent = LLMAgent.from_env(params.section(params.load(args.profile), "simuhome.llm"))
    if agent is None:
        raise SystemExit(f"no endpoint: set {ENV_URL} (e.g. http://127.0.0.1:8000/v1) and {ENV_MODEL}, and "
                         f"{ENV_KEY} if the endpoint needs a key")
    episodes = json.loads(args.episodes.read_text())[:args.max_episodes]
    if not episodes:
        raise SystemExit(f"{args.episodes}: no episodes")
    rows = run(episodes, agent, args.max_steps, args.seed, args.out)
    for c, (won, n) in success_by_category(rows).items():
        print(f"{c:<20} {won:>4}/{n:<4} {won / n:6.1%}")
    total = sum(r["success"] for r in rows)
    print(f"{'all':<20} {total:>4}/{len(rows):<4} {total / len(rows):6.1%}   rows: {args.out}")


if __name__ == "__main__":
    main()
