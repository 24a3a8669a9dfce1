"""An agent for any OpenAI-compatible chat endpoint (a user's own model), under the same ReAct loop as the scripted
agents (`agents.run_episode`).

    SIMUHOME_LLM_BASE_URL=http://127.0.0.1:8000/v1 SIMUHOME_LLM_MODEL=my-model \\
        python -m workflow.papers.simuhome.llm --episodes results/simuhome/episodes/s0.json --max-episodes 24

The model sees only what the paper's agents see: a system prompt, the user's query and where the user is, and the
simulator's tools as function-calling JSON (`sim.TOOL_SPECS`); never the episode's `parse` or `eval`. Each tool
call of a reply is one ReAct step (its observation goes back as a "tool" message); a reply without a tool call ends
the episode with its text as the answer, as a `finish` call does. Not run by default: there is no endpoint offline
(the tests use a loopback server that speaks the protocol).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from pathlib import Path

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


def parse_arguments(raw: str | None) -> dict:
    """A tool call's arguments. Malformed JSON, or JSON that is not an object, is passed on as
    {"_malformed_arguments": raw}: an argument no tool has, so the simulator answers INVALID_COMMAND (and changes
    nothing) and the model sees the error, as it would any other. Empty arguments are {} (servers send "" for
    tools without parameters)."""
    if raw is None or not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        return {"_malformed_arguments": raw}
    return parsed if isinstance(parsed, dict) else {"_malformed_arguments": raw}


def assistant_message(message) -> dict:
    """The reply as it goes back into the history: the protocol requires the assistant message with its
    tool_calls before the "tool" messages that answer them."""
    out = {"role": "assistant", "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [{"id": c.id, "type": "function",
                              "function": {"name": c.function.name, "arguments": c.function.arguments}}
                             for c in message.tool_calls]
    return out


def tool_message(call_id: str, observation: dict) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(observation)}


class LLMAgent:
    """A chat model with function calling as a ReAct agent: `policy` is a generator of agents.Call, like the
    scripted agents'."""
    name = "llm"

    def __init__(self, base_url: str, api_key: str, model: str, temperature: float = 0.0):
        from openai import OpenAI  # imported here: the scripted agents and the pipeline do not need it

        self.client = OpenAI(base_url=base_url, api_key=api_key)
        self.model, self.temperature = model, temperature

    @classmethod
    def from_env(cls) -> "LLMAgent | None":
        """The agent for the endpoint the environment names, None when it names none (URL or model absent)."""
        url, model = os.environ.get(ENV_URL), os.environ.get(ENV_MODEL)
        if not url or not model:
            return None
        return cls(url, os.environ.get(ENV_KEY) or "none", model)

    def complete(self, messages: list[dict], rng):
        """One turn: the endpoint's reply message. At temperature 0 the reply is greedy; above it, a seed drawn
        from the episode's generator goes with the request (servers that honour it then sample reproducibly)."""
        extra = {"seed": int(rng.integers(2 ** 31))} if self.temperature > 0 else {}
        reply = self.client.chat.completions.create(model=self.model, messages=messages, tools=tool_list(),
                                                    temperature=self.temperature, **extra)
        return reply.choices[0].message

    def policy(self, ep: dict, rng):
        messages = [{"role": "system", "content": system_prompt()}, {"role": "user", "content": user_message(ep)}]
        while True:
            message = self.complete(messages, rng)
            messages.append(assistant_message(message))
            if not message.tool_calls:  # a plain reply is the final answer
                yield A.Call(message.content or "", "finish", {"answer": message.content or ""})
                return
            for call in message.tool_calls:
                # run_episode stops sending after a finish (or at max_steps); later calls of the reply then go unrun
                obs = yield A.Call(message.content or "", call.function.name, parse_arguments(call.function.arguments))
                messages.append(tool_message(call.id, obs))


# ---- the CLI ---------------------------------------------------------------------------------------------------

def run(episodes: list[dict], agent, max_steps: int, seed: int) -> list[dict]:
    """One result row per episode (agents.run_episode's), in order."""
    rows = []
    for i, ep in enumerate(episodes):
        row, _ = A.run_episode(ep, agent, max_steps=max_steps, seed=seed)
        rows.append(row)
        print(f"[{i + 1}/{len(episodes)}] {row['episode']}: {'ok' if row['success'] else 'failed'} "
              f"({row['steps']} steps)", file=sys.stderr)
    return rows


def success_by_category(rows: list[dict]) -> dict[str, tuple[int, int]]:
    """category -> (successes, episodes), in the benchmark's category order."""
    out = {}
    for c in E.CATEGORIES:
        mine = [r["success"] for r in rows if r["category"] == c]
        if mine:
            out[c] = (sum(mine), len(mine))
    return out


def write_rows(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=Path, required=True, help="a JSON list of episodes (episodes.generate's)")
    parser.add_argument("--max-episodes", type=int, default=None, help="run only the first N episodes")
    parser.add_argument("--out", type=Path, default=Path("simuhome_llm_runs.csv"), help="the result rows (CSV)")
    parser.add_argument("--max-steps", type=int, default=20, help="the ReAct step limit (the paper's 20)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    agent = LLMAgent.from_env()
    if agent is None:
        raise SystemExit(f"no endpoint: set {ENV_URL} (e.g. http://127.0.0.1:8000/v1) and {ENV_MODEL}, and "
                         f"{ENV_KEY} if the endpoint needs a key")
    episodes = json.loads(args.episodes.read_text())[:args.max_episodes]
    if not episodes:
        raise SystemExit(f"{args.episodes}: no episodes")
    rows = run(episodes, agent, args.max_steps, args.seed)
    write_rows(args.out, rows)
    for c, (won, n) in success_by_category(rows).items():
        print(f"{c:<20} {won:>4}/{n:<4} {won / n:6.1%}")
    total = sum(r["success"] for r in rows)
    print(f"{'all':<20} {total:>4}/{len(rows):<4} {total / len(rows):6.1%}   rows: {args.out}")


if __name__ == "__main__":
    main()
